"""What a real model cannot be made to do, forced on llama.cpp's OpenAI-compatible server
(``llama-cpp-python[server]``) with a tiny random-weight GGUF model written by the test (tests/llm/tiny_gguf.py):
a server that ignores vLLM's field (free text where a label was required), a model that never stops (every
output too long), a server killed between calls; and the whole evaluation set through HTTP, which the
tiny model answers in seconds.  Everything a real model can show runs on one in
tests/llm/test_real_model.py.

Skipped when llama_cpp is not installed, unless BUTAI_REQUIRE_MODEL_SERVER=1 (``make test-models``), where a
missing server is a failure.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

if os.environ.get("BUTAI_REQUIRE_MODEL_SERVER") != "1":
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed "
                                                       "(make test-models installs it)")
    pytest.importorskip("gguf")

from butai_tools.llm.doctor import diagnose  # noqa: E402
from chalicelib.config import Settings  # noqa: E402
from chalicelib.interpret import ErrorKind, InterpretChoices, InterpretContext, Interpreter  # noqa: E402
from chalicelib.interpret.backends import build_backend  # noqa: E402
from chalicelib.scenario import GameRules, PlayerInput, load_scenario  # noqa: E402
from chalicelib.talk import OpenAIGenerator, Talker, TalkRequest  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.llm.llama_server import LlamaServer  # noqa: E402
from tests.llm.tiny_gguf import write_tiny_model  # noqa: E402
from tests.spec_states import SETUPS, play  # noqa: E402

pytestmark = pytest.mark.models
ALIAS = "butai-tiny"
TEXTS = ["こんばんは", "流す曲を変えてみたら？", "控え室に行こう", "お邪魔しました", "おでん、夏は暑くない？"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    return write_tiny_model(tmp_path_factory.mktemp("gguf") / "tiny.gguf")


@pytest.fixture(scope="module")
def server(model_file, tmp_path_factory):
    running = LlamaServer(model_file, tmp_path_factory.mktemp("llama") / "server.log", alias=ALIAS)
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


def test_a_server_without_vllms_field_is_caught(server, calls):
    """llama.cpp ignores vLLM's structured_outputs: configured to send it, the answer is free text,
    the result なし with invalid_answer, and `butai doctor` names the problem."""
    name, choices, context = calls[0]
    backend = build_backend("openai", base_url=server.url, mode="vllm", timeout=60)
    result = backend.interpret("こんばんは", choices, context)
    assert result.input == PlayerInput.none() and result.error == ErrorKind.INVALID_ANSWER
    assert result.mode == "vllm"
    classifier, _ = diagnose(Settings.from_env({"BUTAI_MODEL_URL": server.url, "BUTAI_MODEL_MODE": "vllm"}))
    assert not classifier.ok and "ignores constraints in mode vllm" in classifier.message


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


def test_killed_server_gives_none_and_fallbacks(model_file, tmp_path, calls, rules):
    own = LlamaServer(model_file, tmp_path / "server.log", alias=ALIAS)
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
