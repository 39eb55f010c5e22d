"""A word shared by many things reaches a knowledge entry only in the entry's sense: an entry's words that name
no subject (元気, 何年) count only when its `subject` was named in the line or the exchange just before it; a
word that only modifies the noun after it (看板 of 看板猫) is not the entry's word; a place other than the
stage (コンビニ, 和菓子屋) is not the shop; a question that only asks back a fact just said (「三十年も？」) gets
that fact again."""
from __future__ import annotations

import copy

import pytest

from chalicelib.conversation.confirm import confirmed_phrase, kanji_number
from chalicelib.conversation.elsewhere import other_places
from chalicelib.interpret.senses import compound_head
from chalicelib.interpret.text import nfkc
from chalicelib.scenario import ScenarioError, load_scenario_data
from tests.director.playing import said, visit
from tests.scenario.conftest import small_scenario

OWN = ("店内", "店", "お店", "カウンター", "控え室", "奥")


# ---- the pieces, on their own

@pytest.mark.parametrize("text,word,head", [
    ("看板猫の名前は？", "看板", "猫"),
    ("ホラー映画とか観る？", "ホラー", "映画"),
    ("看板のネオン、直さないの？", "看板", None),
    ("昔の看板って残ってる？", "看板", None),
    ("三十年前の話", "三十", None),
])
def test_a_word_before_the_noun_it_modifies_has_that_noun_as_the_compounds_head(text, word, head):
    text = nfkc(text)
    start = text.index(word)
    assert compound_head(text, start, start + len(word)) == head


@pytest.mark.parametrize("text,places", [
    ("店を出たところのコンビニ、遅くまでやってる？", ("コンビニ",)),
    ("この辺においしい和菓子屋さんある？", ("和菓子屋",)),
    ("駅前の本屋って何時まで？", ("本屋",)),
    ("このお店って何時まで？", ()),
    ("お店は何年目？", ()),
    ("看板猫の名前は？", ()),
])
def test_places_other_than_the_stage_are_read_from_the_line(text, places):
    assert other_places(nfkc(text), OWN) == places


@pytest.mark.parametrize("text,said_before,phrase", [
    ("三十年も？", "この店？　もう三十年になるわね。", "三十年"),
    ("へえ、このお店を30年？", "この店？　もう三十年になるわね。", "三十年"),
    ("別府も？", "今は別府で温泉三昧よ。", "別府"),
    ("三十年って何があったの？", "もう三十年になるわね。", None),      # a wh-question asks more
    ("二十年も？", "もう三十年になるわね。", None),                   # not what was said
    ("ナポリタン？", "ナポリタンがおすすめよ。", None),               # a bare noun may be an order
])
def test_a_question_only_asking_back_what_was_just_said(text, said_before, phrase):
    assert confirmed_phrase(text, said_before) == phrase


def test_numbers_in_digits_read_as_authored_kanji():
    assert kanji_number("30年、2年、105円、1000枚") == "三十年、二年、百五円、千枚"


def test_a_subject_needs_words_and_no_empty_word():
    data = copy.deepcopy(small_scenario())
    data["characters"][0]["knowledge"].append({"info": "x", "subject": ["先代"],
                                               "lines": [{"text": "元気よ"}]})
    with pytest.raises(ScenarioError) as caught:
        load_scenario_data(data, source="t.json")
    assert any("subject without words" in str(p) for p in caught.value.problems)
    data["characters"][0]["knowledge"][-1]["words"] = ["元気"]
    data["characters"][0]["knowledge"][-1]["subject"] = [" "]
    with pytest.raises(ScenarioError) as caught:
        load_scenario_data(data, source="t.json")
    assert any("empty word in subject" in str(p) for p in caught.value.problems)
    data["characters"][0]["knowledge"][-1]["subject"] = ["先代"]
    load_scenario_data(data, source="t.json")


# ---- through the whole turn, on the reference scenario

def test_a_word_naming_no_subject_does_not_reach_the_subjects_entry_alone():
    played = visit("こんばんは", "今も元気？")[-1]
    assert "九十" not in said(played)


def test_the_subject_talked_about_just_before_carries_to_a_follow_up():
    played = visit("こんばんは", "先代さんってどういう方？", "今もお元気なの？")[-1]
    assert "九十" in said(played) or "別府" in said(played), said(played)


def test_the_subject_named_in_the_line_reaches_it():
    played = visit("こんばんは", "師匠さんは今もお元気？")[-1]
    assert "九十" in said(played) or "別府" in said(played), said(played)


def test_a_compound_is_about_its_last_noun():
    played = visit("こんばんは", "看板猫の名前、なんだったっけ？")[-1]
    assert "クロ" in said(played) and "ネオン" not in said(played) and "血の池" not in said(played), said(played)


def test_someone_elses_mama_is_not_the_mama_here():
    played = visit("こんばんは", "先代のママってどんな人？")[-1]
    assert played.answer is not None and played.answer.speaker == "赤尾妙子", said(played)
    assert "先代" in said(played), said(played)


def test_another_shop_open_late_is_not_the_shop_open():
    played = visit("こんばんは", "そこの角のコンビニって夜中もやってる？")[-1]
    assert "カウンターへ" not in said(played), said(played)


def test_a_good_shop_nearby_asked_for_is_not_praise():
    played = visit("こんばんは", "この近くでおいしいケーキ屋さん知らない？")[-1]
    assert played.answer is not None and played.answer.act != "称賛", said(played)
    assert "うれしいこと" not in said(played), said(played)


def test_a_fact_asked_back_is_said_again():
    played = visit("こんばんは", "このお店って何年やってるの？", "三十年も？")[-1]
    assert played.answer is not None and played.answer.source == "recall", said(played)
    assert "三十年" in said(played), said(played)
