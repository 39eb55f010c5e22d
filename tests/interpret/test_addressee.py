"""Who the player talks to, and addressee narrowing."""
from __future__ import annotations

import pytest

from chalicelib.interpret import InterpretChoices, addressee_narrowing, detect_addressee
from chalicelib.scenario import PlayerInput

AOI, MAMA = "神楽坂葵", "赤尾妙子"


@pytest.mark.parametrize("text, who, how", [
    ("葵、今度一緒に映画見ようよ", AOI, "head"),
    ("ねえ葵ちゃん、聞いて", AOI, "head"),
    ("ママ！ナポリタンください", MAMA, "head"),
    ("葵はどう思う？", AOI, "question"),
    ("葵はSNSとかやってるの？", AOI, "question"),
    ("ママに聞きたいんだけど", MAMA, "phrase"),
    ("それで、妙子さんの意見は？", MAMA, "phrase"),
    ("この店の音楽、葵はどう思う？", AOI, "phrase"),
    # at the head of a later sentence: the last one that calls
    ("あはは、ママらしい。葵ちゃんは？スマホで全部済ませる派？", AOI, "question"),
    ("そりゃ店の行く末も気になるわな。葵ちゃん、ドア変えるって何色にすんの", AOI, "head"),
    ("献杯ね笑　村井さんに。…葵ちゃんも何か飲む？", AOI, "question"),
    # naming whom the player asks, now (〜てんだ is 〜ているんだ)
    ("葵ちゃんに聞いてんだよ。新しいドアは何色？", AOI, "phrase"),
])
def test_detected(rules, states, text, who, how):
    found = detect_addressee(text, rules, states["none"])
    assert (found.character, found.how) == (who, how)


@pytest.mark.parametrize("text", [
    "ママの料理おいしい", "葵は映画が好きなんだって", "流す曲を変えてみたら？", "葵ちゃんとママ、仲いいね",
    "ビールうまいね。葵ちゃんは映画が好きなんだって", "ママに聞いたんだけど、ここ三十年なんだって",
])
def test_talking_about_is_not_addressing(rules, states, text):
    assert detect_addressee(text, rules, states["none"]).character is None


def test_given_and_text(rules, states):
    assert detect_addressee("流す曲を変えてみたら？", rules, states["none"], AOI).character == AOI
    assert detect_addressee("流す曲を変えてみたら？", rules, states["none"], AOI).how == "given"
    # the text names someone else: the text wins
    assert detect_addressee("ママ、曲を変えたら？", rules, states["none"], AOI).character == MAMA
    # the head of the line wins over the head of a later sentence
    assert detect_addressee("ママ、ビールちょうだい。葵ちゃんは何飲む？", rules, states["none"]).character == MAMA


def test_someone_not_present_is_ignored(rules, states):
    found = detect_addressee("ママ、聞いてよ", rules, states["back"])
    assert found.character is None and found.ignored == MAMA
    assert detect_addressee("こんにちは", rules, states["back"], MAMA).character is None


def test_reference_scenario_keeps_music_for_aoi(rules, states):
    # 「葵はどう思う？この店の音楽」: O1 is ママ's, but 葵 has knowledge of 音楽 → stays
    choices = InterpretChoices.make(rules, states["none"])
    narrowed, removed = addressee_narrowing(choices, rules, states["none"], AOI)
    assert removed == [] and narrowed.contains(PlayerInput.intent("音楽"))


def test_narrowing_removes_what_the_addressee_cannot_answer(small_rules):
    state = small_rules.start().state
    choices = InterpretChoices.make(small_rules, state)
    narrowed, removed = addressee_narrowing(choices, small_rules, state, "乙")
    assert removed == ["A1", "A3"]                         # 天気 and 夕食 are 甲's lines; 乙 knows neither
    assert narrowed.tokens == ["A2", "A4", "A5"]           # 花 (乙's own line), the move, 離脱
    same, none_removed = addressee_narrowing(choices, small_rules, state, "甲")   # the responder
    assert none_removed == [] and same.tokens == choices.tokens
    absent, absent_removed = addressee_narrowing(choices, small_rules, state, "丙")  # not in 部屋
    assert absent_removed == [] and absent.tokens == choices.tokens


def test_turn_uses_detected_addressee(small_rules):
    from chalicelib.interpret import Interpreter
    state = small_rules.start().state
    turn = Interpreter(small_rules).interpret_turn("乙ちゃん、今日はいい天気だね", state)
    assert turn.addressee == "乙"
    assert [n.input for n in turn.debug.narrowing.addressee] == ["意図:天気", "意図:夕食"]
    assert turn.input == PlayerInput.none()                 # 天気 was not offered
