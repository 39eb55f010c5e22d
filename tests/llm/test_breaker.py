"""The model server's circuit breaker (chalicelib/llm/breaker.py): closed → open after failures in a row →
half-open probe → closed or open again; while open the model is not asked, the classifier answers なし at
once, `lexical+<model>` keeps the lexical reading, the debug record and a metric say so."""
from __future__ import annotations

import socket
import time

import pytest

from chalicelib import context, observability
from chalicelib.config import Settings
from chalicelib.interpret import Interpreter
from chalicelib.interpret.backends import build_backend
from chalicelib.llm import breaker
from chalicelib.llm.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker
from chalicelib.llm.errors import ErrorKind, ModelCallError
from chalicelib.llm.settings import DEFAULT_SAGEMAKER_TIMEOUT, ModelSettings
from chalicelib.scenario import GameRules, load_scenario
from tests.conftest import ROOT
from tests.interpret.test_openai import FakeServer, completion
from tests.spec_states import SETUPS, play


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def failing(kind=ErrorKind.TIMEOUT):
    def attempt():
        raise ModelCallError(kind, "no answer")
    return attempt


def test_repeated_failures_open_it_and_an_open_breaker_asks_nothing():
    clock = Clock()
    guard = CircuitBreaker("endpoint", failures=3, open_seconds=30, clock=clock)
    for _ in range(2):
        with pytest.raises(ModelCallError) as exc:
            guard.call(failing())
        assert exc.value.kind == ErrorKind.TIMEOUT
    assert guard.state == CLOSED
    with pytest.raises(ModelCallError):
        guard.call(failing(ErrorKind.UNREACHABLE))
    assert guard.state == OPEN
    asked = []
    with pytest.raises(ModelCallError) as exc:
        guard.call(lambda: asked.append(1))
    assert exc.value.kind == ErrorKind.CIRCUIT_OPEN and asked == []
    assert "3 failures in a row" in exc.value.message and "next probe in 30.0s" in exc.value.message


def test_an_answer_resets_the_count_and_a_rejected_request_is_not_a_server_failure():
    guard = CircuitBreaker("endpoint", failures=2, open_seconds=30, clock=Clock())
    for attempt in (failing(), lambda: "ok", failing(), failing(ErrorKind.BAD_REQUEST), failing(),
                    failing(ErrorKind.INVALID_ANSWER)):
        try:
            guard.call(attempt)
        except ModelCallError:
            pass
    assert guard.state == CLOSED


def test_after_the_open_time_one_probe_goes_through_and_its_answer_closes_it():
    clock = Clock()
    guard = CircuitBreaker("endpoint", failures=1, open_seconds=30, clock=clock)
    with pytest.raises(ModelCallError):
        guard.call(failing())
    clock.now += 29.9
    assert guard.state == OPEN
    clock.now += 0.1
    assert guard.state == HALF_OPEN
    refused_during_the_probe = []

    def probe():
        # another call while the probe is out is refused at once
        with pytest.raises(ModelCallError) as exc:
            guard.call(lambda: "not asked")
        refused_during_the_probe.append(exc.value.kind)
        return "answer"

    assert guard.call(probe) == "answer"
    assert refused_during_the_probe == [ErrorKind.CIRCUIT_OPEN]
    assert guard.state == CLOSED and guard.call(lambda: "next") == "next"


def test_a_failed_probe_opens_it_for_another_open_time():
    clock = Clock()
    guard = CircuitBreaker("endpoint", failures=3, open_seconds=10, clock=clock)
    for _ in range(3):
        with pytest.raises(ModelCallError):
            guard.call(failing())
    clock.now += 10
    with pytest.raises(ModelCallError) as exc:
        guard.call(failing(ErrorKind.UNAVAILABLE))          # the probe: one failure is enough
    assert exc.value.kind == ErrorKind.UNAVAILABLE and guard.state == OPEN
    clock.now += 9
    with pytest.raises(ModelCallError) as exc:
        guard.call(lambda: "not asked")
    assert exc.value.kind == ErrorKind.CIRCUIT_OPEN


def test_one_breaker_per_server_shared_by_every_backend_built_for_it():
    a = breaker.for_server("sagemaker endpoint x", failures=3, open_seconds=30)
    assert breaker.for_server("sagemaker endpoint x", failures=3, open_seconds=30) is a
    assert breaker.for_server("sagemaker endpoint y", failures=3, open_seconds=30) is not a
    assert breaker.for_server("sagemaker endpoint x", failures=0) is None
    first = build_backend("sagemaker", endpoint="x", client=object(), breaker_failures=3, breaker_seconds=30)
    second = build_backend("lexical+sagemaker", endpoint="x", client=object(), breaker_failures=3,
                           breaker_seconds=30)
    assert first.chooser.transport.breaker is second.model.chooser.transport.breaker is a


def test_the_deployed_classifier_settings_are_a_short_timeout_and_a_breaker():
    use = ModelSettings.read({"BUTAI_CLASSIFIER": "lexical+sagemaker", "BUTAI_SAGEMAKER_ENDPOINT": "e"}).classifier
    assert use.options["timeout"] == DEFAULT_SAGEMAKER_TIMEOUT == 1.5
    assert (use.options["breaker_failures"], use.options["breaker_seconds"]) == (3, 30.0)
    use = ModelSettings.read({"BUTAI_CLASSIFIER": "sagemaker", "BUTAI_SAGEMAKER_ENDPOINT": "e",
                              "BUTAI_CLASSIFIER_TIMEOUT": "0.8", "BUTAI_CLASSIFIER_BREAKER_FAILURES": "5",
                              "BUTAI_CLASSIFIER_BREAKER_SECONDS": "12"}).classifier
    assert (use.options["timeout"], use.options["breaker_failures"], use.options["breaker_seconds"]) == (0.8, 5, 12.0)
    backend = context.build_models(Settings.from_env({"BUTAI_CLASSIFIER": "lexical+sagemaker",
                                                      "BUTAI_SAGEMAKER_ENDPOINT": "e"}, models=True)).classifier()
    transport = backend.model.chooser.transport
    assert transport.timeout == 1.5 and transport.breaker.failures == 3
    # the endpoint's client waits no longer than the call may (and botocore retries nothing)
    assert transport.client._args[3] == 1.5


# ---------------------------------------------------------------- a real server that stops answering

@pytest.fixture(autouse=True)
def readable_lines(monkeypatch):
    # A breaker's changes are logged: as the local runtime does, not through Lambda's logger.
    monkeypatch.setenv("BUTAI_LOCAL", "1")
    observability.logger.cache_clear()
    yield
    observability.logger.cache_clear()


@pytest.fixture(scope="module")
def rules():
    return GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))


@pytest.fixture
def server():
    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


UNSURE = "お酒が進む曲だね"          # lexical: 意図:音楽, unsure (a one-character word): the model is asked


def model_backend(name, server, clock):
    backend = build_backend(name, base_url=server.base_url, model="tiny", timeout=0.3, context_limit=4096, mode="json_schema",
                            use_server_tokenizer=False, breaker_failures=3, breaker_seconds=30)
    model = backend.model if name.startswith("lexical+") else backend
    model.chooser.transport.breaker._clock = clock
    return backend


def test_a_server_that_times_out_is_left_alone_and_the_turn_keeps_the_lexical_reading(rules, server):
    clock = Clock()
    interpreter = Interpreter(rules, model_backend("lexical+openai", server, clock))
    state = play(rules, SETUPS["none"])
    for _ in range(3):
        server.queue.append((200, completion('{"answer": "B"}'), 2.0))   # long after the 0.3 s timeout
        turn = interpreter.interpret_turn(UNSURE, state)
        assert str(turn.input) == "意図:音楽" and "lexical kept: model timeout" in turn.interpretation.detail
    assert len(server.chats()) == 3 and turn.debug.backend.circuit == OPEN
    start = time.perf_counter()
    turn = interpreter.interpret_turn(UNSURE, state)
    waited = time.perf_counter() - start
    assert len(server.chats()) == 3                              # not asked
    assert str(turn.input) == "意図:音楽" and "lexical kept: model circuit_open" in turn.interpretation.detail
    assert turn.debug.backend.circuit == OPEN and waited < 0.3
    # a sure turn never asks the model, and still shows the breaker's state
    assert interpreter.interpret_turn("ナポリタンを看板メニューにしようよ", state).debug.backend.circuit == OPEN
    clock.now += 30                                              # the open time is over: one probe
    server.queue.append((200, completion('{"answer": "B"}'), 0.0))   # B = 意図:メニュー
    turn = interpreter.interpret_turn(UNSURE, state)
    assert len(server.chats()) == 4 and str(turn.input) == "意図:メニュー"
    assert turn.debug.backend.circuit == CLOSED


def test_a_model_alone_answers_nashi_at_once_while_open(rules):
    # A port that takes the connection and never answers: every call times out.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        clock = Clock()
        backend = build_backend("openai", base_url=f"http://127.0.0.1:{silent.getsockname()[1]}/v1", model="tiny",
                                timeout=0.2, context_limit=4096, use_server_tokenizer=False, mode="json_schema", breaker_failures=2,
                                breaker_seconds=30)
        backend.chooser.transport.breaker._clock = clock
        interpreter = Interpreter(rules, backend)
        state = play(rules, SETUPS["none"])
        kinds = [interpreter.interpret_turn(UNSURE, state).error for _ in range(3)]
        assert kinds == [ErrorKind.TIMEOUT, ErrorKind.TIMEOUT, ErrorKind.CIRCUIT_OPEN]
        turn = interpreter.interpret_turn(UNSURE, state)
        assert str(turn.input) == "なし" and turn.debug.backend.error == ErrorKind.CIRCUIT_OPEN
        assert turn.debug.backend.circuit == OPEN and turn.debug.ms["total"] < 200
    finally:
        silent.close()


def test_every_change_of_state_is_a_metric_and_a_warning(monkeypatch):
    points, warnings = [], []
    monkeypatch.setattr(observability, "metric", lambda name, value=1.0, unit="Count", **dims:
                        points.append((name, dims)))
    monkeypatch.setattr(observability, "warn", lambda message, **fields: warnings.append((message, fields)))
    context.build_models(Settings.from_env({}, models=True))     # hands the changes to the metrics
    clock = Clock()
    guard = breaker.for_server("sagemaker endpoint e", failures=1, open_seconds=5)
    guard._clock = clock
    with pytest.raises(ModelCallError):
        guard.call(failing())
    clock.now += 5
    guard.call(lambda: "ok")
    assert points == [("ModelCircuit", {"state": OPEN}), ("ModelCircuit", {"state": HALF_OPEN}),
                      ("ModelCircuit", {"state": CLOSED})]
    assert [m for m, _ in warnings] == ["model circuit breaker open", "model circuit breaker half-open"]
    assert warnings[0][1] == {"server": "sagemaker endpoint e", "was": CLOSED}
