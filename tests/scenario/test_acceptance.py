"""The acceptance examples of SCENARIO-SPEC.md, on the reference scenario."""
from __future__ import annotations

from chalicelib.scenario import PlayerInput


def strs(inputs):
    return [str(i) for i in inputs]


def play(rules, *inputs):
    step = rules.start()
    steps = [step]
    for text in inputs:
        step = rules.handle(PlayerInput.parse(text), step.state)
        steps.append(step)
    return steps


def test_start_shows_a01_a02_and_mama_smiles(rules):
    step = rules.start()
    assert step.input is None
    assert step.line_ids == ("A01", "A02")
    assert [line.speaker for line in step.lines] == ["赤尾妙子", "神楽坂葵"]
    assert step.state.expressions["赤尾妙子"] == "smile"
    assert step.state.expressions["神楽坂葵"] == "neutral"
    assert step.state.place == "店内"
    assert step.free_talk is None and step.notices == ()


def test_trace_nashi_ongaku_hikaeshitsu(rules):
    _, first, second, third = play(rules, "なし", "意図:音楽", "移動:控え室")
    # step 1: free conversation by 赤尾妙子, then A03, A04
    assert first.free_talk is not None
    assert first.free_talk.speaker == "赤尾妙子"
    assert first.free_talk.intent is None
    assert first.line_ids == ("A03", "A04")
    assert [line.trigger for line in first.lines] == ["progression", "chain"]
    # step 2: O1, O2; 神楽坂葵 becomes angry
    assert second.free_talk is None
    assert second.line_ids == ("O1", "O2")
    assert second.state.expressions["神楽坂葵"] == "angry"
    assert strs(second.effects) == ["表情:神楽坂葵:angry"]
    # step 3: moves to 控え室 and shows B01
    assert third.state.place == "控え室"
    assert third.line_ids == ("B01",)
    assert [line.trigger for line in third.lines] == ["arrival"]


def test_candidates_after_nashi(rules):
    state = play(rules, "なし")[-1].state
    assert state.has_shown("A04")
    assert [f"{tok} {inp}" for tok, inp in rules.tokens(state)] == [
        "A1 意図:音楽", "A2 意図:メニュー", "A3 意図:二人の先の話", "A4 移動:控え室", "A5 離脱",
        "A6 意図:赤いドア", "A7 意図:店名と看板", "A8 意図:宣伝の写真", "A9 意図:いい店とは", "A10 意図:今のままでいい",
    ]
    assert strs(rules.input_candidates(state)) == ["意図:音楽", "意図:メニュー", "意図:二人の先の話", "移動:控え室", "離脱"]
    assert strs(rules.answered_intents(state)) == [
        "意図:赤いドア", "意図:店名と看板", "意図:宣伝の写真", "意図:いい店とは", "意図:今のままでいい"]


def test_candidates_after_nashi_ongaku_and_ongaku_again_is_free_talk(rules):
    state = play(rules, "なし", "意図:音楽")[-1].state
    assert [f"{tok} {inp}" for tok, inp in rules.tokens(state)] == [
        "A1 意図:メニュー", "A2 意図:二人の先の話", "A3 移動:控え室", "A4 離脱", "A5 意図:音楽",
        "A6 意図:赤いドア", "A7 意図:店名と看板", "A8 意図:宣伝の写真", "A9 意図:いい店とは", "A10 意図:今のままでいい",
    ]
    again = rules.handle(PlayerInput.intent("音楽"), state)
    assert again.line_ids == ()
    assert again.free_talk is not None
    assert again.free_talk.speaker == "赤尾妙子"
    assert again.free_talk.intent == "音楽"
    # the music opinion, and no other topic's (entries of no topic, the shop's history, always come along)
    given = again.free_talk.knowledge
    assert given[0].info == "店では、自分で集めた昭和歌謡のレコードをかけている。若い人向けに、たまに違う曲を混ぜるくらいなら考えてもいい"
    assert all(k.condition in ("意図:音楽", "") for k in given)


def test_candidates_at_start(rules):
    state = rules.start().state
    assert [f"{tok} {inp}" for tok, inp in rules.tokens(state)] == [
        "A1 移動:控え室", "A2 離脱", "A3 意図:赤いドア", "A4 意図:店名と看板",
        "A5 意図:宣伝の写真", "A6 意図:いい店とは", "A7 意図:今のままでいい",
    ]
    assert rules.candidates(state) == rules.input_candidates(state) + rules.answered_intents(state)
