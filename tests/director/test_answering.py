"""The authored answer's arbiter (conversation/answering.py) and what a knowledge line may rest on."""
from __future__ import annotations

from chalicelib.answers import Answer
from chalicelib.conversation.answering import Proposal, Strength, arbitrate
from chalicelib.turn_record import AnswerSource
from tests.director.playing import conversation_of, play


def _answer(ref: str) -> Answer:
    return Answer("甲", ref, "neutral", AnswerSource.KNOWLEDGE, ref, "なし")


def test_the_first_proposal_that_is_no_weak_guess_wins_and_every_policy_is_recorded():
    policies = (("a", lambda d: None), ("b", lambda d: Proposal(_answer("b"), Strength.WEAK, "shared word")),
                ("c", lambda d: _answer("c")), ("fallback", lambda d: _answer("f")))
    answer, considered = arbitrate(None, policies)       # type: ignore[arg-type]
    assert answer.ref == "c"
    assert [(c.policy, c.outcome) for c in considered][:3] == [("a", "nothing"), ("b", "weak"), ("c", "answered")]
    assert "lost to c" in considered[-1].outcome


def test_a_weak_guess_beats_only_the_fallback():
    policies = (("b", lambda d: Proposal(_answer("b"), Strength.WEAK)), ("fallback", lambda d: _answer("f")))
    answer, considered = arbitrate(None, policies)       # type: ignore[arg-type]
    assert answer.ref == "b" and considered[-1].outcome.startswith("only a weak guess")


def test_a_word_inside_another_word_is_no_hit():
    scenario = {
        "title": "t", "start": {"place": "店"},
        "characters": [{"id": "甲", "name": "甲", "fallbacks": [{"id": "f", "text": "ふむ。"}],
                        "forms": {"offer": {"lines": [{"text": "助かるよ。"}]}},
                        "knowledge": [{"info": "手が痛い", "words": ["手"], "lines": [{"text": "手が痛くてね。"}]}]}],
        "places": [{"id": "店", "people": ["甲"]}], "intents": [], "scenes": []}
    conversation = conversation_of(scenario, "t.json")
    [helping] = play(conversation, "その荷物、運ぶの手伝おうか？")
    assert helping.answer.text == "助かるよ。"                   # an offer of help, not the hand
    [hand] = play(conversation, "手は大丈夫？")
    assert hand.answer.text == "手が痛くてね。"


def test_every_policy_that_proposed_is_in_the_debug_record():
    scenario = {
        "title": "t", "start": {"place": "店"},
        "characters": [{"id": "甲", "name": "甲", "fallbacks": [{"id": "f", "text": "ふむ。"}]}],
        "places": [{"id": "店", "people": ["甲"]}], "intents": [], "scenes": []}
    [turn] = play(conversation_of(scenario, "t.json"), "今日はいい天気だね")
    assert turn.context["deliberation"][-1] == {"policy": "fallback", "outcome": "answered", "ref": "fallback/f"}
