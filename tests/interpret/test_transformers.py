"""The transformers backend on a tiny random model built here (no downloads)."""
from __future__ import annotations

import os
import random

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from chalicelib.interpret import ErrorKind, InterpretChoices, InterpretContext, Interpreter  # noqa: E402
from chalicelib.interpret.backends import build_backend  # noqa: E402
from chalicelib.interpret.backends.base import AnswerSheet  # noqa: E402
from chalicelib.interpret.backends.transformers_local import TransformersBackend  # noqa: E402
from chalicelib.interpret.prompts import PromptTemplates  # noqa: E402
from chalicelib.scenario import PlayerInput  # noqa: E402


def corpus(rules) -> list[str]:
    """A few hundred strings: the prompt's own text, the scenario's texts and option labels."""
    sc = rules.scenario
    texts = PromptTemplates().instructions().splitlines()
    for intent in sc.intents.values():
        texts += [intent.description, *intent.examples, *intent.words]
    for line in sc.lines.values():
        texts.append(line.text)
    for character in sc.characters.values():
        texts += [character.profile or "", *(k.info for k in character.knowledge)]
    texts += [f"- {c}: " for c in "ABCDEFGHIJ"] + ["none", "## 選択肢", "## 今の場面", "発言:「", "場所を移る"]
    return [t for t in texts if t] * 3


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, rules):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    torch.manual_seed(0)
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<pad>", "<unk>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(rules), trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                                pad_token="<pad>", unk_token="<unk>")
    config = transformers.Qwen2Config(vocab_size=fast.vocab_size, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=4096, tie_word_embeddings=True)
    model = transformers.Qwen2ForCausalLM(config)
    path = tmp_path_factory.mktemp("tiny-qwen")
    fast.save_pretrained(path)
    model.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def backend(model_dir):
    return TransformersBackend(model_dir, device="cpu", timeout=30)


@pytest.fixture
def call(rules, states):
    state = states["none"]
    return InterpretChoices.make(rules, state), InterpretContext.make(rules, state)


def random_text(rng: random.Random) -> str:
    pool = "あいうえおかきくけこ流す曲を変えてみたら控え室ナポリタン赤いドア看板写真ABCxyz0123 、。！？「」\n#🍣"
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 40)))


SHORT_INSTRUCTIONS = "選択肢から一つ、または {{ none_answer }} を選ぶ。"
SHORT_PROMPT = """{% for option in options %}- {{ option.answer }}: {{ option.label }}
{% endfor %}- {{ none_answer }}
発言:「{{ text }}」"""


def test_always_a_listed_token_or_none(model_dir, small_rules, tmp_path):
    # short templates keep 200 forward passes quick; the scoring is the same
    (tmp_path / "instructions.j2").write_text(SHORT_INSTRUCTIONS, encoding="utf-8")
    (tmp_path / "prompt.j2").write_text(SHORT_PROMPT, encoding="utf-8")
    backend = TransformersBackend(model_dir, device="cpu", templates=PromptTemplates(str(tmp_path)))
    state = small_rules.start().state
    choices, context = InterpretChoices.make(small_rules, state), InterpretContext.make(small_rules, state)
    rng = random.Random(7)
    allowed = set(choices.tokens)
    seen = set()
    for _ in range(200):
        narrowed = choices.keep(lambda o: rng.random() < 0.7)
        result = backend.interpret(random_text(rng), narrowed, context)
        assert result.error is None, result.detail
        assert result.token is None or result.token in set(narrowed.tokens) <= allowed
        assert result.input == (narrowed.input_for(result.token) if result.token else PlayerInput.none())
        if narrowed.options:
            assert abs(sum(result.scores.values()) - 1.0) < 1e-6
            assert set(result.scores) == set(narrowed.tokens) | {"none"}
        seen.add(result.answer)
    assert len(seen) >= 1


def test_auto_labels_are_single_tokens(backend, call):
    choices, _ = call
    scheme = backend.label_scheme(choices)
    sheet = AnswerSheet.make(choices, scheme)
    assert all(backend.chooser.single_token(a) is not None for a in sheet.allowed)


def test_multi_token_answers_use_one_batched_pass(model_dir, call):
    choices, context = call
    backend = TransformersBackend(model_dir, device="cpu", labels="tokens")
    sheet = AnswerSheet.make(choices, "tokens")
    assert any(backend.chooser.single_token(a) is None for a in sheet.allowed)    # A10 is several tokens here
    result = backend.interpret("流す曲を変えてみたら？", choices, context)
    assert result.error is None
    assert result.token is None or result.token in choices.tokens
    assert abs(sum(result.scores.values()) - 1.0) < 1e-6


def test_batched_scores_match_a_plain_forward_pass(model_dir):
    backend = TransformersBackend(model_dir, device="cpu", labels="tokens")
    prompt = "選択肢を一つ選ぶ。発言:「流す曲を変えてみたら？」 答え: "
    answers = ["A1", "A10", "none"]
    local = backend.chooser
    prompt_ids = local._encode(prompt)
    got = local.score(prompt_ids, answers)
    for answer, value in zip(answers, got):
        ids = prompt_ids + local._encode(answer)
        with torch.inference_mode():
            logprobs = torch.log_softmax(local.model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
        expected = sum(float(logprobs[len(prompt_ids) + i - 1, t]) for i, t in enumerate(local._encode(answer)))
        assert abs(value - expected) < 1e-3


def test_budget_drops_examples_when_the_context_is_small(model_dir, backend, call):
    choices, context = call
    sheet = AnswerSheet.make(choices, backend.label_scheme(choices))
    full = backend.fit("こんばんは", choices, context, sheet)
    assert not full.examples_dropped
    system, bare_user = backend.instructions, backend.templates.prompt(
        "こんばんは", choices, context, sheet.answers, with_examples=False)
    bare_tokens = backend.count_tokens(system, bare_user)
    full_tokens = backend.count_tokens(full.system, full.user)
    assert bare_tokens < full_tokens
    small = TransformersBackend(model_dir, device="cpu", context_limit=bare_tokens + 64 + 1)
    result = small.interpret("こんばんは", choices, context)
    assert result.examples_dropped and result.error is None and result.prompt_tokens == bare_tokens
    tiny = TransformersBackend(model_dir, device="cpu", context_limit=bare_tokens + 63)
    result = tiny.interpret("こんばんは", choices, context)
    assert result.error == ErrorKind.CONTEXT_OVERFLOW and result.input == PlayerInput.none()


def test_context_limit_from_the_model(backend):
    assert backend.context_limit() == 4096


def test_missing_model_is_unavailable(tmp_path, call):
    choices, context = call
    result = build_backend("transformers", model_path=str(tmp_path / "nothing")).interpret("x", choices, context)
    assert result.error == ErrorKind.UNAVAILABLE and result.input == PlayerInput.none()


def test_through_the_turn_entry_point(rules, states, backend):
    turn = Interpreter(rules, backend).interpret_turn("じゃあ、そろそろ失礼します", states["none"])
    assert turn.input == PlayerInput.leave()                   # the farewell rule, whatever the model said
    assert turn.debug.backend.name == "transformers"
    assert set(turn.debug.backend.scores) >= {"none"}
