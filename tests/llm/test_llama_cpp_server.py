"""The classifier and free conversation against a real third-party server: llama.cpp's
OpenAI-compatible server (``llama-cpp-python[server]``, built from source by requirements-models.txt)
on a tiny random-weight GGUF model written by the test (tests/llm/tiny_gguf.py), over HTTP.

The server is started exactly as docs/models.md's llama.cpp recipe says (``python -m llama_cpp.server
--model FILE …``), on an ephemeral port.  Skipped when llama_cpp is not installed, unless
BUTAI_REQUIRE_MODEL_SERVER=1 (``make test-models``), where a missing server is a failure.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

if os.environ.get("BUTAI_REQUIRE_MODEL_SERVER") != "1":
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed "
                                                       "(make test-models installs it)")
    pytest.importorskip("gguf")

from butai_tools.llm.doctor import diagnose  # noqa: E402
from chalicelib.interpret import ErrorKind, InterpretChoices, InterpretContext, Interpreter  # noqa: E402
from chalicelib.interpret.backends import build_backend  # noqa: E402
from chalicelib.interpret.backends.base import AnswerSheet  # noqa: E402
from chalicelib.scenario import GameRules, PlayerInput, load_scenario  # noqa: E402
from chalicelib.talk import OpenAIGenerator, Talker, TalkRequest  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.llm.tiny_gguf import write_tiny_model  # noqa: E402
from tests.spec_states import SETUPS, play  # noqa: E402

pytestmark = pytest.mark.models
ALIAS = "butai-tiny"
TEXTS = ["こんばんは", "流す曲を変えてみたら？", "控え室に行こう", "お邪魔しました", "おでん、夏は暑くない？"]


class LlamaServer:
    """``python -m llama_cpp.server`` in its own process; the port is read from uvicorn's start line."""

    def __init__(self, model: Path, log: Path) -> None:
        self.log = log
        self.handle = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
             "--n_ctx", "32768", "--n_threads", "1", "--host", "127.0.0.1", "--port", "0"],
            stdout=self.handle, stderr=subprocess.STDOUT)
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", self.log.read_text(errors="replace"))
            if found:
                return found.group(1) + "/v1"
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("llama.cpp server did not start:\n" + self.log.read_text(errors="replace")[-3000:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.handle.close()


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture(scope="module")
def server(model_file, tmp_path_factory):
    running = LlamaServer(model_file, tmp_path_factory.mktemp("llama") / "server.log")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def rules() -> GameRules:
    return GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))


@pytest.fixture(scope="module")
def calls(rules):
    """(state name, choices, context) for every state of the spec."""
    out = []
    for name, setup in SETUPS.items():
        state = play(rules, setup)
        out.append((name, InterpretChoices.make(rules, state), InterpretContext.make(rules, state)))
    return out


def test_the_recipe_server_lists_the_model(server):
    with urllib.request.urlopen(server.url + "/models", timeout=10) as response:
        ids = [m["id"] for m in json.loads(response.read())["data"]]
    assert ids == [ALIAS]


def test_classifier_answers_within_the_labels_with_probabilities(server, calls):
    backend = build_backend("openai", base_url=server.url, timeout=60)
    modes = set()
    for name, choices, context in calls:
        allowed = AnswerSheet.make(choices).allowed
        for text in TEXTS:
            result = backend.interpret(text, choices, context)
            assert result.error is None, (name, text, result.detail)
            assert result.answer in allowed, (name, text, result.answer)
            assert result.input == choices.input_for(result.token) or result.answer == "none"
            # the probabilities come from the answer token's top logprobs, mapped back to the options
            assert result.scores and set(result.scores) <= {*choices.tokens, "none"}
            assert sum(result.scores.values()) == pytest.approx(1.0)
            modes.add(result.mode)
    # llama-cpp-python's server takes response_format json_object with a schema; the probe finds that
    assert modes <= {"json_schema", "json_object"} and len(modes) == 1, modes


def test_narrowed_choices_stay_narrowed(server, calls):
    """The constraint is real: with only some options offered, only those (or none) come back."""
    backend = build_backend("openai", base_url=server.url, timeout=60)
    name, choices, context = calls[1]
    for keep in (choices.tokens[2:4], choices.tokens[-1:]):
        narrowed = choices.keep(lambda o: o.token in keep)
        result = backend.interpret("こんばんは", narrowed, context)
        assert result.error is None, result.detail
        assert result.token in (*keep, None)


def test_a_server_without_vllms_field_is_caught(server, calls):
    """llama.cpp ignores vLLM's structured_outputs: configured to send it, the answer is free text,
    the result なし with invalid_answer, and `butai doctor` names the problem."""
    name, choices, context = calls[0]
    backend = build_backend("openai", base_url=server.url, mode="vllm", timeout=60)
    result = backend.interpret("こんばんは", choices, context)
    assert result.input == PlayerInput.none() and result.error == ErrorKind.INVALID_ANSWER
    assert result.mode == "vllm"
    classifier, _ = diagnose({"BUTAI_MODEL_URL": server.url, "BUTAI_MODEL_MODE": "vllm"})
    assert not classifier.ok and "ignores constraints in mode vllm" in classifier.message


def test_doctor_reports_both_uses_live(server):
    classifier, talk = diagnose({"BUTAI_MODEL_URL": server.url, "BUTAI_MODEL": ALIAS})
    assert classifier.ok and talk.ok, (classifier.line(), talk.line())
    assert classifier.mode in ("json_schema", "json_object") and "logprobs" in classifier.message
    missing, _ = diagnose({"BUTAI_MODEL_URL": server.url, "BUTAI_MODEL": "qwen2.5:7b"})
    assert not missing.ok and missing.kind == ErrorKind.MODEL_MISSING and ALIAS in missing.message


def talk_request(rules, **changes):
    character = rules.scenario.characters["赤尾妙子"]
    values = dict(character=character, knowledge=[], player_text="こんばんは", place="カウンター")
    values.update(changes)
    return TalkRequest(**values)


def test_free_conversation_checks_and_fallbacks(server, rules):
    generator = OpenAIGenerator(server.url, timeout=60)
    short = Talker(generator, max_tokens=12).say(talk_request(rules))
    assert short.source == "model", short.attempts
    assert short.mode == "standard" and len(short.text) == 12
    # the tiny model never stops by itself: past the length limit every output is rejected
    long = Talker(generator, max_tokens=200).say(talk_request(rules))
    assert long.source == "fallback" and long.reason == "too_long"
    assert [a.rejected for a in long.attempts] == ["too_long", "too_long"]
    assert long.text in [f.text for f in rules.scenario.characters["赤尾妙子"].fallbacks]


def test_timeout_gives_none_with_its_kind(server, calls, rules):
    """A timeout far below what any answer takes (reading a prompt of thousands of tokens): the call
    gives up, the classifier answers なし and free conversation a fallback line, each with the kind."""
    name, choices, context = calls[0]
    result = build_backend("openai", base_url=server.url, model=ALIAS, timeout=0.001).interpret(
        "こんばんは", choices, context)
    assert result.input == PlayerInput.none() and result.error == ErrorKind.TIMEOUT, result.detail
    talk = Talker(OpenAIGenerator(server.url, model=ALIAS, timeout=0.001)).say(talk_request(rules))
    assert talk.source == "fallback" and talk.reason == ErrorKind.TIMEOUT
    assert [a.error for a in talk.attempts] == [ErrorKind.TIMEOUT, ErrorKind.TIMEOUT]


def test_killed_server_gives_none_and_fallbacks(model_file, tmp_path, calls, rules):
    own = LlamaServer(model_file, tmp_path / "server.log")
    try:
        name, choices, context = calls[0]
        backend = build_backend("openai", base_url=own.url, timeout=60)
        talker = Talker(OpenAIGenerator(own.url, timeout=60), max_tokens=12)
        assert backend.interpret("こんばんは", choices, context).error is None
        assert talker.say(talk_request(rules)).source == "model"
    finally:
        own.stop()
    result = backend.interpret("こんばんは", choices, context)
    assert result.input == PlayerInput.none() and result.error == ErrorKind.UNREACHABLE, result.detail
    talk = talker.say(talk_request(rules))
    assert talk.source == "fallback" and talk.reason == ErrorKind.UNREACHABLE


def test_eval_interpret_reports_the_same_table(server, capsys):
    from butai_tools.cli import main
    dataset = ROOT / "scenarios" / "eval" / "interpret.json"
    code = main(["eval-interpret", str(ROOT / "scenarios" / "chinoike.json"), str(dataset), "--backend", "openai",
                 "--base-url", server.url, "--timeout", "60", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["backend"] == "openai" and len(report["cases"]) == len(json.loads(dataset.read_text())["cases"])
    assert 0.0 <= report["accuracy"] <= 1.0
    # every case went through the model and came back within its options (none of them an error)
    assert all(case.get("error") is None for case in report["cases"]), \
        [case for case in report["cases"] if case.get("error")][:3]


def test_interpreter_end_to_end(server, rules):
    """The whole pipeline (narrowing, model, refinement) with the model behind HTTP."""
    interpreter = Interpreter(rules, build_backend("openai", base_url=server.url, timeout=60))
    state = play(rules, SETUPS["none"])
    turn = interpreter.interpret_turn("こんばんは", state)
    assert turn.debug.backend.name == "openai" and turn.debug.backend.error is None
    assert turn.debug.backend.mode in ("json_schema", "json_object")
