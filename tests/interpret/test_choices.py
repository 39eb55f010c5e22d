"""Candidates with tokens, labels and narrowing words (the spec's states)."""
from __future__ import annotations

from chalicelib.interpret import LEAVE_LABEL, InterpretChoices, InterpretContext, move_label
from chalicelib.scenario import PlayerInput


def inputs(choices):
    return [(o.token, str(o.input)) for o in choices]


def test_after_none_exactly_the_spec_candidates(rules, states):
    choices = InterpretChoices.make(rules, states["none"])
    assert inputs(choices) == [
        ("A1", "意図:音楽"), ("A2", "意図:メニュー"), ("A3", "意図:二人の先の話"), ("A4", "移動:控え室"),
        ("A5", "離脱"), ("A6", "意図:赤いドア"), ("A7", "意図:店名と看板"), ("A8", "意図:宣伝の写真"),
        ("A9", "意図:いい店とは"), ("A10", "意図:今のままでいい")]
    music = choices.by_token("A1")
    assert music.label.startswith("店で流す音楽")
    assert music.examples == ("流す曲を変えてみたら？", "昭和歌謡は続けたほうがいいよ")
    assert "流す" in music.words and music.source == "input"
    assert choices.by_token("A6").source == "answered"
    assert choices.by_token("A4").label == "場所を移る：「控え室」へ行く" == move_label("控え室")
    assert choices.by_token("A4").names == ("控え室", "控室", "奥", "バックヤード")
    assert choices.by_token("A5").label == LEAVE_LABEL == "今いる場所を離れる"


def test_tokens_follow_the_state(rules, states):
    after_music = InterpretChoices.make(rules, states["music"])
    assert after_music.token_of(PlayerInput.intent("音楽")) == "A5"
    start = InterpretChoices.make(rules, states["start"])
    assert inputs(start)[:3] == [("A1", "移動:控え室"), ("A2", "離脱"), ("A3", "意図:赤いドア")]
    assert not start.contains(PlayerInput.intent("音楽"))


def test_narrowing_never_renumbers(rules, states):
    choices = InterpretChoices.make(rules, states["none"])
    narrowed = choices.without(["A1", "A3"])
    assert narrowed.tokens[:2] == ["A2", "A4"]
    assert narrowed.input_for("A4") == PlayerInput.move("控え室")
    assert narrowed.input_for("A1") == PlayerInput.none()       # removed: means nothing now
    assert narrowed.input_for("A99") == PlayerInput.none()


def test_context_names_people_and_last_line(rules, states):
    context = InterpretContext.make(rules, states["f1"])
    assert context.place == "店内"
    assert [p.name for p in context.people] == ["ママ", "葵"]
    assert context.last_speaker == "葵"
    assert "控え室で話さない" in context.last_line
