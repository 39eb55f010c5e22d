"""A line of several parts (chalicelib/conversation/stitch.py, turn.py's reading): each part is said to the one it
names (else the one tapped, the one who asked, the default), each part with an answer of its own is answered in
order by its addressee, and no stock brush-off follows a real answer to another part."""
from __future__ import annotations

import copy
from typing import Any

from chalicelib.answers import Answer
from chalicelib.conversation import Conversation
from chalicelib.conversation.focus import FocusReader
from chalicelib.conversation.stitch import brush_off, kept
from chalicelib.interpret.asking import is_question
from chalicelib.interpret.cues import SceneNames
from chalicelib.turn_record import AnswerSource
from tests.director.playing import conversation_of, play, visit
from tests.director.test_conversation_focus import STALL, L


def stall() -> Conversation:
    data: dict[str, Any] = copy.deepcopy(STALL)
    boss, daughter = data["characters"]
    boss["knowledge"].append({"info": "娘が継ぐなら継げばいい", "condition": "", "about": ["大将"],
                              "words": ["どう思う", "どう思って"], "lines": [L("継ぎたきゃ継げばいい。俺は止めねえ。")]})
    boss["reactions"].append({"act": "感謝", "lines": [L("おう、ありがとよ。", "smile")]})
    boss["knowledge"].append({"info": "客をねぎらう", "condition": "", "words": ["疲れ", "仕事"],
                              "lines": [L("おう、お疲れさん。")]})
    daughter["knowledge"].append({"info": "二十歳", "condition": "", "about": ["由美"], "words": ["何歳", "歳"],
                                  "lines": [L("二十歳です。", "smile")]})
    daughter["reactions"] = [{"act": "感謝", "lines": [L("どういたしまして。", "smile")]}]
    return conversation_of(data, "stall.json")


def test_no_stock_brush_off_after_a_real_answer_to_the_other_part():
    [both] = play(stall(), "ラーメンください。あと景気はどう？")
    assert both.answer.text == "へい、ラーメン一丁。" and both.memory.orders == ["ラーメン"]
    served = Answer("大将", "へい。", "smile", AnswerSource.ORDER, "menu/大将/ラーメン#1", "なし")
    stock = Answer("大将", "さあな。", "neutral", AnswerSource.REACTION, "reaction/大将/質問#1", "質問")
    fallback = Answer("由美", "ふうん。", "neutral", AnswerSource.FALLBACK, "fallback/由美#1", "なし")
    assert brush_off(stock) and brush_off(fallback) and not brush_off(served)
    assert kept(served, stock) == (served, None) and kept(fallback, served) == (None, served)
    assert kept(stock, fallback) == (stock, fallback)        # nothing better: said as before


def test_each_part_is_said_to_the_one_it_names_else_the_one_tapped():
    [both] = play(stall(), "ありがとう。由美ちゃん、跡継ぎって考えてる？", to="大将")
    assert [(a.speaker, a.text) for a in both.before] == [("大将", "おう、ありがとよ。")]
    assert both.answer.speaker == "由美"
    [named] = play(stall(), "由美ちゃん、ありがとう。大将、お名前は？")
    assert [(a.speaker, a.text) for a in named.before] == [("由美", "どういたしまして。")]
    assert named.answer.speaker == "大将" and named.answer.text.startswith("源三")


def test_two_questions_to_two_people_are_both_answered_in_order():
    [both] = play(stall(), "大将のお名前は？由美ちゃんは何歳？")
    assert [a.speaker for a in both.before] == ["大将"] and both.before[0].text.startswith("源三")
    assert both.answer.speaker == "由美" and both.answer.text == "二十歳です。"


def test_a_remark_to_one_and_a_question_to_the_other_are_both_answered():
    [both] = play(stall(), "大将、仕事で疲れたよ。由美ちゃんは何歳？")
    assert [(a.speaker, a.text) for a in both.before] == [("大将", "おう、お疲れさん。")]
    assert both.answer.speaker == "由美" and both.answer.text == "二十歳です。"


def test_a_call_after_a_pause_still_names_the_one_spoken_to():
    [paused] = play(stall(), "…由美ちゃん、何歳？")
    assert paused.addressee == "由美" and paused.answer.text == "二十歳です。"
    [ordered] = play(stall(), "ラーメンください。…由美ちゃん、何歳？")
    assert [a.speaker for a in ordered.before] == ["大将"] and ordered.answer.text == "二十歳です。"


def test_the_view_of_the_one_asked_is_theirs_to_give_about_someone_else():
    reader = FocusReader(SceneNames.of(stall().scenario))
    view = reader.read("大将はどう思う？由美ちゃんの跡継ぎの話")
    assert view.view and view.called == "大将" and view.subjects("大将") == ("由美", "大将")
    assert not reader.read("大将、由美ちゃんとはどういう関係？").view
    [asked] = play(stall(), "大将はどう思ってるんですか、由美ちゃんの跡継ぎ")
    assert asked.answer.speaker == "大将" and asked.answer.text.startswith("継ぎたきゃ")


def test_a_question_with_its_afterthought_after_the_comma_asks():
    assert is_question("どう思ってるんですか、由美ちゃんの話")
    assert is_question("いつ来たんだっけ、あの人")
    assert not is_question("そうですか、わかりました。")


def test_the_one_spoken_to_named_politely_is_the_one_asked_about():
    reader = FocusReader(SceneNames.of(stall().scenario))
    assert reader.read("じゃあ大将で。そちらの方は？").you and reader.read("そちらさんは？").you
    assert not reader.read("そちらのお酒は？").you


def test_thanks_to_one_and_an_order_to_the_other_are_both_answered():
    [both] = play(stall(), "由美ちゃん、ありがとう。大将、ラーメンね")
    assert [(a.speaker, a.text) for a in both.before] == [("由美", "どういたしまして。")]
    assert both.answer.speaker == "大将" and both.memory.orders == ["ラーメン"]


def test_a_name_called_in_the_first_part_does_not_take_the_answer_to_anothers_question():
    # (the reference scenario: 葵 asks 「……あなたはどう思う？」 after the first turn)
    _, both = visit("こんばんは", "ママ、ビール。うーん、変えるのもいいと思うよ")
    assert [a.speaker for a in both.before] == ["赤尾妙子"] and both.memory.orders == ["ビール"]
    assert both.answer.speaker == "神楽坂葵"


def test_an_answer_to_the_open_question_then_an_order_by_name_are_both_answered():
    _, both = visit("こんばんは", "いいと思うよ。ママ、ビールね")
    assert [a.speaker for a in both.before] == ["神楽坂葵"] and both.context["reply"]["to"] == "line/A04"
    assert both.answer.speaker == "赤尾妙子" and both.memory.orders == ["ビール"]


def test_the_view_asked_of_someone_about_the_other_is_what_they_know_of_the_other():
    _, asked = visit("こんばんは", "ママはどう思う？葵ちゃんのこと")
    assert asked.answer.speaker == "赤尾妙子" and "頑張り屋" in asked.answer.text
    _, plan = visit("こんばんは", "ママはどう思う？葵さんの計画")
    assert plan.answer.speaker == "赤尾妙子" and not plan.before       # 「葵さんの計画」 alone asks 葵 nothing
