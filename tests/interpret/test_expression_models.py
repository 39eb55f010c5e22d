"""Model expression judges: the model-call layer's constrained choice choosing a face, as the classifier's.

The openai model against the fake OpenAI-compatible server on 127.0.0.1,
and the transformers model on the tiny random model built for its tests.
"""
from __future__ import annotations

import pytest

from chalicelib.expression import ExpressionChoice, build_judge
from chalicelib.expression.model import ModelJudge
from chalicelib.llm.build import build_chooser
from tests.interpret.test_openai import FakeServer, completion

MAMA = ("neutral", "smile", "troubled", "surprised", "angry")


@pytest.fixture
def server():
    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


def test_openai_choice_is_constrained_to_the_characters_keys(server):
    server.queue.append((200, completion("angry", logprobs=[("angry", -0.1), ("troubled", -2.5), ("none", -4.0)]),
                         0.0))
    judge = build_judge("openai", base_url=server.base_url, model="tiny-qwen", context_limit=4096)
    judged = judge.judge("いい加減にしなさい！", ExpressionChoice.of(MAMA, "赤尾妙子", "ママ"))
    assert judged.error is None, judged.detail
    assert judged.expression == "angry" and judged.judge == "openai"
    assert set(judged.scores) == set(MAMA) and judged.scores["angry"] > 0.8
    assert judged.scores["neutral"] > 0                     # the model's "none" counts as neutral
    [request] = server.chats()
    body = request["body"]
    assert body["structured_outputs"] == {"choice": [*MAMA, "none"]}
    assert body["temperature"] == 0
    assert "「いい加減にしなさい！」" in body["messages"][1]["content"] and "ママ" in body["messages"][1]["content"]
    for key in MAMA:
        assert f"- {key}" in body["messages"][1]["content"]


def test_a_failing_model_leaves_the_line_to_the_embedded_judge(server):
    server.queue.append((200, completion("embarrassed"), 0.0))         # not one of ママ's keys
    server.queue.append((503, {"error": "down"}, 0.0))
    judge = ModelJudge(build_chooser("openai", base_url=server.base_url, model="tiny-qwen", timeout=2),
                       context_limit=4096)
    off_list = judge.judge("えっ、まさか！", ExpressionChoice.of(MAMA))
    assert off_list.error == "invalid_answer" and off_list.judge == "openai→lexicon"
    assert off_list.expression == "surprised"
    down = judge.judge("ごめんね。", ExpressionChoice.of(MAMA))
    assert down.error == "unavailable" and down.expression == "troubled"


def test_transformers_scores_every_key(model_dir):
    pytest.importorskip("torch")
    judge = build_judge("transformers", model_path=model_dir, device="cpu", timeout=30)
    choice = ExpressionChoice.of(MAMA, "赤尾妙子", "ママ")
    judged = judge.judge("嬉しいこと言ってくれるじゃないか。<|im_end|>", choice)
    assert judged.error is None, judged.detail
    assert judged.expression in MAMA                        # random weights: any key, never off the list
    assert set(judged.scores) == set(MAMA) and sum(judged.scores.values()) == pytest.approx(1.0)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, rules):
    pytest.importorskip("transformers")
    from tests.interpret import test_transformers
    return test_transformers.model_dir.__wrapped__(tmp_path_factory, rules)
