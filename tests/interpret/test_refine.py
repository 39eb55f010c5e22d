"""Refinement rules: the seed's cases and near misses that must not trigger."""
from __future__ import annotations

import pytest

from chalicelib.interpret import Interpretation, InterpretChoices, InterpretContext, Interpreter, refine
from chalicelib.interpret.cues import SceneNames, farewell, short_agreement
from chalicelib.interpret.refine import example_intent
from chalicelib.interpret.text import nfkc
from chalicelib.scenario import PlayerInput

NONE = PlayerInput.none()
LEAVE = PlayerInput.leave()
TO_BACK = PlayerInput.move("控え室")
TO_SHOP = PlayerInput.move("店内")
MUSIC = PlayerInput.intent("音楽")


def decide(rules, states, state_name, text, chosen):
    state = states[state_name]
    choices = InterpretChoices.make(rules, state)
    context = InterpretContext.make(rules, state)
    return refine(chosen, text, choices, context, SceneNames.of(rules.scenario))


class Fixed:
    """A backend that always answers the same input (to show what rules do to it)."""
    name = "fixed"

    def __init__(self, answer: PlayerInput):
        self.answer = answer
        self.calls = 0

    def interpret(self, text, choices, context):
        self.calls += 1
        return Interpretation(choices.find(self.answer).input if choices.find(self.answer) else NONE,
                              choices.token_of(self.answer), backend=self.name)


# ---------------------------------------------------------------- 7.1 example match

def test_example_match_overrides_the_model(rules, states):
    decision = decide(rules, states, "none", "流す曲を変えてみたら！", PlayerInput.intent("メニュー"))
    assert (decision.input, decision.rule) == (MUSIC, "example_match")


@pytest.mark.parametrize("text", [
    "流す曲を変えたら？",       # LCS 8 of 10 (< 90 %)
    "今のまま",                 # under 6 characters
    "あの赤いドア、目立たない？",  # close to an example but not 90 %
])
def test_example_match_near_misses(rules, states, text):
    choices = InterpretChoices.make(rules, states["none"])
    assert example_intent(text, choices) is None


def test_example_match_needs_exactly_one_intent(small_rules):
    from chalicelib.interpret.options import Option
    from chalicelib.scenario import PlayerInput as P
    choices = InterpretChoices((Option("A1", P.intent("天気"), "a", ("今日はいい天気だね",)),
                                Option("A2", P.intent("花"), "b", ("今日はいい天気だね",))), "部屋", ())
    assert example_intent("今日はいい天気だね", choices) is None


# ---------------------------------------------------------------- 7.2 explicit moves

@pytest.mark.parametrize("text", ["控え室に行こう", "控室へ行ってみようか", "奥で話そうか", "バックヤードに移動しよう",
                                  "控え室に行かない？", "控え室、見てみたいな"])
def test_explicit_move_whatever_the_model_said(rules, states, text):
    decision = decide(rules, states, "none", text, MUSIC)
    assert (decision.input, decision.rule) == (TO_BACK, "explicit_move")


# Asking leave to go to a place the line names (控え室に行ってもいい？) is the request itself: it moves
# (tests/interpret/test_whole_sentence.py); not needing to go (行かなくてもいい？) does not.
@pytest.mark.parametrize("text", ["控え室には行ったことある？", "控え室には行かなくてもいい？", "控え室には行かない",
                                  "控え室ってどこにあるの？", "控え室に行ったら何がある？", "奥さんに会いに行こう",
                                  "お店の写真ならカウンターの方が入りやすそう", "控え室って入りにくいね",
                                  "店内に戻りづらい", "控え室に入りそうな箱"])
def test_questions_and_negations_are_not_moves(rules, states, text):
    assert decide(rules, states, "none", text, NONE).input == NONE
    # and a move the model chose is withdrawn
    assert decide(rules, states, "none", text, TO_BACK).input == NONE


def test_person_destination(rules, states):
    decision = decide(rules, states, "back", "ママに会いに行こう", NONE)
    assert (decision.input, decision.rule) == (TO_SHOP, "explicit_move")
    # 葵 is here: no move; asking where ママ is: no move
    assert decide(rules, states, "back", "葵に会いに行こう", NONE).input == NONE
    assert decide(rules, states, "back", "ママはどこにいるの？", NONE).input == NONE


def test_same_place_is_answered_without_a_model_call(rules, states):
    backend = Fixed(MUSIC)
    turn = Interpreter(rules, backend).interpret_turn("控え室に行こうか", states["back"])
    assert backend.calls == 0
    assert turn.input == TO_BACK and turn.already_here and turn.rule == "same_place"
    step = rules.handle(turn.input, states["back"])
    assert [n.kind for n in step.notices] == ["already_here"] and step.state.place == "控え室"


# ---------------------------------------------------------------- 7.3 moves without a cue

def test_invitation_without_destination_does_not_move(rules, states):
    # the article's unit test: the model chose 移動:控え室 for an invitation to a film
    decision = decide(rules, states, "none", "葵、今度一緒に映画見ようよ", TO_BACK)
    assert (decision.input, decision.rule) == (NONE, "unfounded_move")
    assert decide(rules, states, "none", "一緒に映画見に行こうよ", TO_BACK).input == NONE


def test_a_move_with_a_cue_is_kept(rules, states):
    assert decide(rules, states, "none", "場所を変えようか", TO_BACK).input == TO_BACK
    assert decide(rules, states, "none", "控え室へ！", TO_BACK).input == TO_BACK


def test_leave_without_a_cue_is_withdrawn(rules, states):
    decision = decide(rules, states, "none", "ナポリタンおいしいね", LEAVE)
    assert (decision.input, decision.rule) == (NONE, "unfounded_leave")
    assert decide(rules, states, "none", "そろそろ行かなきゃ", LEAVE).input == LEAVE


# ---------------------------------------------------------------- 7.4 agreement and farewells

@pytest.mark.parametrize("text", ["うん、行ってみよう", "いいよ、そうしよう", "わかった、行こう", "うん"])
def test_agreement_after_an_invitation_moves(rules, states, text):
    decision = decide(rules, states, "f1", text, NONE)
    assert (decision.input, decision.rule) == (TO_BACK, "agreement")


@pytest.mark.parametrize("text", ["いや、ここでいいよ", "あとでね", "うん、でもここで話そう"])
def test_refusals_after_an_invitation_do_not_move(rules, states, text):
    assert decide(rules, states, "f1", text, NONE).input == NONE


def test_agreement_without_invitation_does_not_move(rules, states):
    for name in ("none", "music"):
        assert decide(rules, states, name, "うん、行ってみよう", NONE).input == NONE
    # B04 invites to choose photos, not to a place
    state = rules.handle(PlayerInput.intent("宣伝の写真"), states["back"]).state
    choices = InterpretChoices.make(rules, state)
    decision = refine(NONE, "うん、いいよ", choices, InterpretContext.make(rules, state), SceneNames.of(rules.scenario))
    assert decision.input == NONE


@pytest.mark.parametrize("text", ["じゃあ、そろそろ失礼します", "お邪魔しました！", "今日はこのへんで帰ります",
                                  "ごちそうさまでした、また来ます", "帰ろうか？"])
def test_farewell_leaves(rules, states, text):
    decision = decide(rules, states, "none", text, MUSIC)
    assert (decision.input, decision.rule) == (LEAVE, "farewell")


@pytest.mark.parametrize("text", ["失礼しますって言うの？", "「失礼します」", "もう帰るの？",
                                  "失礼します、って言って入ればよかったかな", "お邪魔しましたって書いてあった"])
def test_farewell_asked_about_does_not_leave(rules, states, text):
    assert not farewell(nfkc(text))
    assert decide(rules, states, "none", text, NONE).input == NONE


@pytest.mark.parametrize("text", ["もう一杯だけ飲んだら帰ろうかな", "この曲が終わったら帰ります", "食べてから帰るね",
                                  "雨が止んだら失礼します"])
def test_a_leave_put_off_until_something_is_done_does_not_leave(rules, states, text):
    # whatever the classifier chose: the leave is for later
    assert not farewell(nfkc(text))
    assert decide(rules, states, "none", text, LEAVE).input == NONE


def test_short_agreement_shapes():
    assert short_agreement("うん、行ってみよう")
    assert not short_agreement("うん、でもママに聞いてからにしよう")
    assert not short_agreement("行かない")
