"""Constrained choice at the body level: what each mode sends and how each answer is read."""
from __future__ import annotations

import json
import math

import pytest

from chalicelib.llm import ChoiceMode, ErrorKind, ModelCallError, choice_body, read_choice
from chalicelib.llm.choice import JSON_MAX_TOKENS, answer_schema

LABELS = ["A", "B", "none"]
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def completion(content, entries=None, finish="stop"):
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
    if entries is not None:
        choice["logprobs"] = {"content": entries}
    return {"choices": [choice]}


def entry(token, alternatives):
    """One logprobs position: the token chosen and its alternatives {text: probability}."""
    return {"token": token, "logprob": math.log(alternatives.get(token, 0.5)),
            "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()]}


def test_vllm_body_uses_structured_outputs():
    body = choice_body(MESSAGES, LABELS, ChoiceMode.VLLM, model="m")
    assert body == {"model": "m", "messages": MESSAGES, "temperature": 0, "max_tokens": 16, "logprobs": True,
                    "top_logprobs": 20, "structured_outputs": {"choice": LABELS},
                    "chat_template_kwargs": {"enable_thinking": False}}


def test_json_schema_body_is_openai_standard():
    body = choice_body(MESSAGES, LABELS, ChoiceMode.JSON_SCHEMA, model="m")
    assert body == {"model": "m", "messages": MESSAGES, "temperature": 0, "max_tokens": JSON_MAX_TOKENS,
                    "logprobs": True, "top_logprobs": 20,
                    "response_format": {"type": "json_schema", "json_schema": {
                        "name": "choice", "strict": True,
                        "schema": {"type": "object", "properties": {"answer": {"type": "string", "enum": LABELS}},
                                   "required": ["answer"], "additionalProperties": False}}}}
    # nothing only vLLM knows: OpenAI's API rejects unknown fields
    assert "structured_outputs" not in body and "chat_template_kwargs" not in body


def test_json_object_body_carries_the_same_schema():
    body = choice_body(MESSAGES, LABELS, ChoiceMode.JSON_OBJECT)
    assert body["response_format"] == {"type": "json_object", "schema": answer_schema(LABELS)}
    assert "model" not in body and "structured_outputs" not in body


def test_vllm_answer_and_probabilities_from_the_first_token():
    data = completion("B", [entry("B", {"B": 0.6, "A": 0.2, "none": 0.1, "x": 0.1})])
    choice = read_choice(data, LABELS, ChoiceMode.VLLM)
    assert choice.label == "B" and choice.mode is ChoiceMode.VLLM
    assert choice.probabilities == pytest.approx({"B": 0.6 / 0.9, "A": 0.2 / 0.9, "none": 0.1 / 0.9})


@pytest.mark.parametrize("tokens, alternatives_at", [
    # one token per piece
    (['{"', 'answer', '":', ' "', 'B', '"}'], 4),
    # the quote before the value is in the same token as the value (``"B``): cut from every alternative
    (['{', '"answer"', ': ', '"B', '"', '}'], 3),
])
def test_json_answer_probabilities_at_the_value(tokens, alternatives_at):
    content = "".join(tokens)
    entries = []
    for index, token in enumerate(tokens):
        if index == alternatives_at:
            lead = token[:-1]
            entries.append(entry(token, {lead + "B": 0.5, lead + "A": 0.3, lead + "n": 0.1, "zz": 0.1}))
        else:
            entries.append(entry(token, {token: 0.99}))
    choice = read_choice(completion(content, entries), LABELS, ChoiceMode.JSON_SCHEMA)
    assert choice.label == "B"
    # "n" is a prefix of exactly one label (none)
    assert choice.probabilities == pytest.approx({"B": 0.5 / 0.9, "A": 0.3 / 0.9, "none": 0.1 / 0.9})


def test_json_answer_without_logprobs_still_counts():
    choice = read_choice(completion(json.dumps({"answer": "none"})), LABELS, ChoiceMode.JSON_OBJECT)
    assert choice.label == "none" and choice.probabilities == {}


@pytest.mark.parametrize("content, mode", [
    ("Hello, welcome!", ChoiceMode.JSON_SCHEMA),          # a server that ignored the constraint
    ('{"answer": "C"}', ChoiceMode.JSON_SCHEMA),
    ('{"other": "A"}', ChoiceMode.JSON_OBJECT),
    ("Hello, welcome!", ChoiceMode.VLLM),
    ('{"answer": "A"}', ChoiceMode.VLLM),                  # a JSON answer where a bare label was asked for
])
def test_answers_outside_the_labels_are_invalid(content, mode):
    with pytest.raises(ModelCallError) as caught:
        read_choice(completion(content), LABELS, mode)
    assert caught.value.kind == ErrorKind.INVALID_ANSWER


@pytest.mark.parametrize("data, kind", [
    ({"choices": []}, ErrorKind.MALFORMED),
    ({"error": {"message": "boom"}}, ErrorKind.MALFORMED),
    (completion('{"answer": "A"}', finish="length"), ErrorKind.INVALID_ANSWER),
    (completion('{"answer": "A"}', finish="content_filter"), ErrorKind.REFUSED),
    (completion(""), ErrorKind.INVALID_ANSWER),
])
def test_unreadable_answers(data, kind):
    with pytest.raises(ModelCallError) as caught:
        read_choice(data, LABELS, ChoiceMode.JSON_SCHEMA)
    assert caught.value.kind == kind
