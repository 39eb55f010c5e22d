"""A failing classifier backend is visible outside the stage's debug record: a warning log line and a
ClassifierCalls metric with outcome = the error kind, in Lambda's formats (JSON log, CloudWatch EMF)."""
from __future__ import annotations

import json

from chalicelib import observability
from chalicelib.interpret import Interpreter
from chalicelib.llm.errors import ErrorKind, ModelCallError
from chalicelib.scenario import GameRules, load_scenario
from tests.conftest import ROOT


class DeadEndpoint:
    """A model backend whose endpoint does not answer."""
    name = "openai"

    def interpret(self, text, choices, context):
        raise ModelCallError(ErrorKind.UNREACHABLE, "connection refused")


def emitted(capsys) -> list[dict]:
    out = capsys.readouterr()
    records = []
    for line in (out.out + out.err).splitlines():
        line = line.strip()
        if line.startswith("{"):
            records.append(json.loads(line))
    return records


def test_a_backend_failure_is_logged_and_counted(monkeypatch, capsys):
    import io
    import logging

    from aws_lambda_powertools import Logger
    monkeypatch.delenv("BUTAI_LOCAL", raising=False)
    # Lambda's logger, writing where the test can read it (a cached one may hold an earlier test's stdout).
    stream = io.StringIO()
    # A Powertools logger of this service made earlier in the process keeps its first handler: start afresh.
    underlying = logging.getLogger("butai")
    monkeypatch.setattr(underlying, "handlers", [])
    from aws_lambda_powertools.logging.constants import (
        LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER,
        LOGGER_ATTRIBUTE_PRECONFIGURED,
    )
    # Set (not deleted), so that undoing restores them as they were, or removes them: the logger Powertools
    # configures here must not outlive the test (a later Logger would take its half-restored state).
    monkeypatch.setattr(underlying, LOGGER_ATTRIBUTE_PRECONFIGURED, False, raising=False)
    monkeypatch.setattr(underlying, LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER, None, raising=False)
    lambda_logger = Logger(service="butai", logger_handler=logging.StreamHandler(stream))
    monkeypatch.setattr(observability, "logger", lambda: lambda_logger)
    rules = GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))
    interpreter = Interpreter(rules, DeadEndpoint())
    result = interpreter.interpret_turn("流す曲を変えてみたら？", rules.new_state(), None)
    assert str(result.input) == "なし" and result.error
    capsys.readouterr()
    observability.classified(result.interpretation.backend, result.error, result.interpretation.detail)
    records = emitted(capsys)
    logs = [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
    logs = [r for r in logs if r.get("level") == "WARNING"]
    assert logs and logs[0]["kind"] == result.error and logs[0]["service"] == "butai"
    metrics = [r for r in records if "_aws" in r]
    assert metrics, records
    emf = metrics[0]
    assert emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "butai"
    assert emf["ClassifierCalls"] == [1.0] or emf["ClassifierCalls"] == 1.0
    assert emf["outcome"] == result.error and emf["backend"]


def test_locally_they_print_readable_lines(monkeypatch, caplog, capsys):
    monkeypatch.setenv("BUTAI_LOCAL", "1")
    observability.logger.cache_clear()
    try:
        observability.classified("openai", "timeout", "read timed out")
        out = capsys.readouterr().err
        assert "metric ClassifierCalls=1 backend=openai outcome=timeout" in out
        assert "classifier call failed" in out and "kind=timeout" in out
        assert not [line for line in out.splitlines() if line.startswith("{")]
    finally:
        observability.logger.cache_clear()


def test_every_metric_names_its_stack(monkeypatch, capsys):
    # Two stacks in one account must not mix: each point carries the stack the template names.
    monkeypatch.delenv("BUTAI_LOCAL", raising=False)
    monkeypatch.setenv("BUTAI_STACK", "butai-prod")
    capsys.readouterr()
    observability.turn_latency(12.5)
    emf = [r for r in emitted(capsys) if "_aws" in r][0]
    assert emf["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service", "stack"]]
    assert (emf["service"], emf["stack"]) == ("butai", "butai-prod")
    monkeypatch.delenv("BUTAI_STACK")
    assert observability.default_dimensions() == {"service": "butai", "stack": "local"}


def test_in_lambda_each_line_is_written_once_as_json_beside_chalices_logger(monkeypatch, capsys):
    # chalice names its app's logger after the app, which is this service's name, and gives it a plain stdout
    # handler: without care every line came out twice, and a second Powertools logger took chalice's handler
    # for its own and failed on the first correlation id (every request a 500).
    import logging
    import sys

    from aws_lambda_powertools.logging.constants import (
        LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER,
        LOGGER_ATTRIBUTE_PRECONFIGURED,
    )
    monkeypatch.delenv("BUTAI_LOCAL", raising=False)
    underlying = logging.getLogger("butai")
    monkeypatch.setattr(underlying, "handlers", [])
    monkeypatch.setattr(underlying, LOGGER_ATTRIBUTE_PRECONFIGURED, False, raising=False)
    monkeypatch.setattr(underlying, LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER, None, raising=False)
    chalices = logging.StreamHandler(sys.stdout)
    chalices.setFormatter(logging.Formatter("%(name)s - %(levelname)s - %(message)s"))
    underlying.addHandler(chalices)
    observability.logger.cache_clear()
    try:
        for _ in range(2):                     # a second logger in the process (the cache cleared) too
            observability.logger.cache_clear()
            observability.set_correlation_id("req-1")
            observability.warn("the endpoint is slow", kind="timeout")
        lines = [line for line in capsys.readouterr().out.splitlines() if "the endpoint is slow" in line]
        assert len(lines) == 2                 # once per call, never the plain copy
        assert all(json.loads(line)["correlation_id"] == "req-1" for line in lines)
        assert chalices not in underlying.handlers
    finally:
        observability.logger.cache_clear()


def test_a_logger_made_while_someone_elses_handler_comes_first_still_takes_correlation_ids(monkeypatch, capsys):
    # A test runner attaches its capture handler (a StreamHandler of its own kind, with a plain formatter) to
    # every logger that does not propagate. A Powertools logger made again in the process while that handler
    # came first took it for its own, and every request failed on its correlation id.
    import io
    import logging

    from aws_lambda_powertools.logging.constants import (
        LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER,
        LOGGER_ATTRIBUTE_PRECONFIGURED,
    )

    class Capture(logging.StreamHandler):
        pass

    monkeypatch.delenv("BUTAI_LOCAL", raising=False)
    underlying = logging.getLogger("butai")
    capture = Capture(io.StringIO())
    capture.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    monkeypatch.setattr(underlying, "handlers", [capture])
    monkeypatch.setattr(underlying, LOGGER_ATTRIBUTE_PRECONFIGURED, True, raising=False)
    monkeypatch.setattr(underlying, LOGGER_ATTRIBUTE_POWERTOOLS_HANDLER, capture, raising=False)
    observability.logger.cache_clear()
    try:
        for _ in range(2):
            observability.logger.cache_clear()
            observability.set_correlation_id("req-2")
            observability.warn("the endpoint is slow", kind="timeout")
        lines = [line for line in capsys.readouterr().out.splitlines() if "the endpoint is slow" in line]
        assert len(lines) == 2 and all(json.loads(line)["correlation_id"] == "req-2" for line in lines)
        assert capture in underlying.handlers                    # someone else's handler is left alone
    finally:
        observability.logger.cache_clear()
