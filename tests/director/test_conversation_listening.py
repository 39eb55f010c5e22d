"""A conversation that answers what was asked (chalicelib/conversation), on the small stall scenario of
test_conversation_focus: stage directions and laughter are not read as words, a question is never taken up as
news, an honest answer about oneself, what the player does is not a thing to take up."""
from __future__ import annotations

import copy
from typing import Any

from chalicelib.conversation import Conversation
from chalicelib.conversation.focus import FocusReader
from chalicelib.interpret.cues import SceneNames
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.interpret.text import without_asides
from chalicelib.scenario import GameRules, load_scenario_data
from tests.director.playing import conversation_of, play
from tests.director.test_conversation_focus import STALL, L


def stall(**changes: Any) -> Conversation:
    data = copy.deepcopy(STALL)
    data["characters"][0]["unsure"] = {"lines": [L("俺か？　……考えたこともねえな。")]}
    data["characters"][1]["unsure"] = {"lines": [L("うーん、まだ決めてないの。")]}
    for key, value in changes.items():
        data[key] = value
    return conversation_of(data, "stall.json")


# ---------------------------------------------------------------- stage directions and laughter

def test_stage_directions_and_laughter_are_not_words():
    assert without_asides("それは困るなあ（笑）もう少し安くならない？") == "それは困るなあ。もう少し安くならない？"
    assert without_asides("(ひそひそ)これ、内緒ね") == "これ、内緒ね"
    assert without_asides("（腕を組んで）うーん、どうしよう") == "うーん、どうしよう"
    assert without_asides("いいねｗ") == "いいね" and without_asides("ほんとに笑") == "ほんとに"
    assert without_asides("笑顔が素敵ですね") == "笑顔が素敵ですね"      # a word with 笑 in it stays
    assert without_asides("（笑）") == "（笑）"                            # nothing else: kept as it is


def test_a_laugh_or_a_whisper_is_never_what_the_line_is_about():
    for text in ("いやあ、参ったなあ（笑）", "ここだけの話ですけど（ひそひそ）", "そうなんですね笑"):
        [played] = play(stall(), text)
        assert played.kind != "echo" or not any(w in played.answer.text for w in ("笑", "ひそひそ"))


# ---------------------------------------------------------------- a question is not news

def test_a_question_about_a_thing_nobody_authored_is_not_echoed_as_news():
    [asked] = play(stall(), "この辺にコインランドリーってあります？")
    assert asked.kind != "echo" and "コインランドリー" not in asked.answer.text


def test_a_question_about_the_one_asked_gets_an_honest_answer_in_their_voice():
    [plans] = play(stall(), "由美ちゃんは、将来は海外に行くつもりなの？", to="由美")
    assert plans.kind == "unsure" and plans.answer.text == "うーん、まだ決めてないの。"
    assert "つもり" not in plans.answer.text
    [own] = play(stall(), "大将って、ゴルフとかやるんですか？")
    assert own.kind == "unsure" and own.answer.speaker == "大将"


def test_a_formal_noun_is_never_the_head_of_a_question():
    reader = FocusReader(SceneNames.of(stall().scenario))
    for text in ("いつ帰るつもりなの？", "もう来るはずじゃないの？", "なんで怒ってるわけ？"):
        assert reader.read(text).head_word not in ("つもり", "はず", "わけ")
    [kept] = play(stall(), "由美ちゃんは、いずれ跡継ぎになるつもり？", to="由美")
    assert kept.answer.text == "……その話はあとでね。"       # the entry's word, not つもり, is what it asks


def test_what_the_player_does_is_not_taken_up_as_a_thing():
    [doing] = play(stall(), "大学でこういう屋台を調査してみたいんです")
    assert doing.kind != "echo" or "調査" not in doing.answer.text
    [hoped] = play(stall(), "来週の旅行、楽しみにしてるんです")
    assert hoped.kind != "echo" or "楽しみ" not in hoped.answer.text
    [pastime] = play(stall(), "休みの日はだいたいキャンプしてます")
    assert pastime.kind == "echo" and "キャンプ" in pastime.answer.text


# ---------------------------------------------------------------- a recall only for the same question

def test_a_different_question_about_a_topic_answered_is_not_told_off_with_the_same_sentence():
    _, more = play(stall(), "便所どこ？", "便所って男女別なの？")
    assert more.kind != "recall" and "裏の公園" not in more.answer.text
    _, same = play(stall(), "スープの仕込みは？", "スープの仕込み、何時から？")
    assert same.kind == "recall" and "五時" in same.answer.text       # asked again: what was said
    _, again = play(stall(), "この店の屋号は？", "で、屋号はなんだっけ？")
    assert again.kind == "recall" and "源" in again.answer.text


def test_a_statement_on_a_topic_answered_gets_no_recall():
    _, said = play(stall(), "屋号の由来は？", "屋号、いい響きですね。覚えやすいです")
    assert said.kind != "recall"


def test_a_frame_word_shared_with_a_line_said_is_no_repeat_of_it():
    _, other = play(stall(), "スープって何時間煮込むの？", "今日はお客さん、もう来ないのかな？")
    assert other.kind != "recall"


# ---------------------------------------------------------------- a common word does not hijack the question

def test_a_name_asked_of_someone_not_here_is_not_the_speakers_name():
    reader = FocusReader(SceneNames.of(stall().scenario))
    assert reader.read("その常連さん、お名前は？").subjects("大将") == ()
    assert reader.read("お名前は？").subjects("大将") == ("大将",)
    [other] = play(stall(), "いつも来る常連さん、お名前は？")
    assert "源三" not in other.answer.text
    [own] = play(stall(), "大将、お名前は？")
    assert own.answer.text.startswith("源三")


def test_a_frame_word_alone_does_not_pull_up_a_line():
    [today] = play(stall(), "今日はお客さん少ないですね。いつもこんな感じ？")
    assert "十二時間" not in today.answer.text and "五時" not in today.answer.text


# ---------------------------------------------------------------- a line whose condition no longer holds

def test_a_knowledge_line_whose_condition_no_longer_holds_is_never_told_as_news():
    data = copy.deepcopy(STALL)
    # said only before the opening line (「未:S1」): by the time the player speaks, never
    data["characters"][1]["knowledge"].append(
        {"info": "裏は物置。誘ってもいい", "condition": "未:S1", "words": ["裏", "物置"],
         "lines": [L("裏は私の物置。古いラジオをしまってるの。……裏に来てみる？")]})
    rules = GameRules(load_scenario_data(data, source="stall.json"))
    conversation = Conversation(rules, Interpreter(rules))
    for text in ("裏って物置なの？", "裏の物置に古いラジオをしまってるの？", "由美ちゃん、裏って何に使ってるの？"):
        [played] = play(conversation, text)
        assert "裏に来てみる" not in (played.answer.text if played.answer else ""), text
