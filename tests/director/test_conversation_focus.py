"""What a line asks about (chalicelib/conversation/focus.py, entries.py) and the answers built on it, on a small
scenario of its own: facts about the one asked before a topic word, the question's head, what a line takes back,
two parts of one line, vague pointers, lines taken up in the character's voice, secrets kept from someone
present, content told before, prices and the bill, yes and no read by the question's kind."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from chalicelib.conversation import Conversation
from chalicelib.conversation.focus import FocusReader, parts, taken_back
from chalicelib.conversation.questions import polarity, question_kind
from chalicelib.interpret.cues import SceneNames
from chalicelib.scenario import load_scenario_data
from chalicelib.scenario.loader import ScenarioError
from chalicelib.stage.records import ConversationMemory
from tests.director.playing import L, conversation_of, play

STALL: dict[str, Any] = {
    "title": "屋台の夜",
    "start": {"place": "屋台"},
    "characters": [
        {"id": "大将", "name": "大将", "aliases": ["大将", "おやじさん"], "expressions": ["neutral", "smile"],
         "knowledge": [
             {"info": "屋号は源", "condition": "意図:屋号", "lines": [L("屋号は『源』。親父の代からだ。")]},
             {"info": "ラジオの音楽", "condition": "意図:音楽", "lines": [L("ラジオはつけっぱなしだ。"), L("音楽はよくわからん。")]},
             {"info": "名前は源三", "condition": "", "words": ["名前", "お名前", "なんていう"], "about": ["大将"],
              "lines": [L("源三だ。みんな大将って呼ぶけどな。", "smile")]},
             {"info": "由美は娘", "condition": "", "words": ["関係", "親子", "娘", "身内"], "about": ["由美"],
              "lines": [L("由美は娘だよ。手伝いに来てくれてる。", "smile")]},
             {"info": "今流れているのはラジオの演歌", "condition": "", "words": ["流れてる", "誰の曲", "かかってる"],
              "lines": [L("ラジオの演歌だよ。誰のかは知らねえ。")]},
             {"info": "スープは豚骨を十二時間", "condition": "意図:仕込み",
              "lines": [L("スープはな、豚骨を十二時間煮込んでるんだ。"), L("仕込みは朝の五時からだ。")]},
             {"info": "便所は裏", "condition": "", "words": ["トイレ", "便所", "お手洗い"], "repeatable": True,
              "lines": [L("便所は裏の公園だ。")]},
         ],
         "reactions": [{"act": "挨拶", "lines": [L("らっしゃい。", "smile")]},
                       {"act": "質問", "lines": [L("さあな。")]}],
         "fallbacks": [{"id": "大将-1", "text": "おう。"}],
         "menu": {"items": [{"id": "ラーメン", "words": ["ラーメン"], "price": 800, "lines": [L("へい、ラーメン一丁。", "smile")]},
                            {"id": "ビール", "words": ["ビール", "瓶"], "price": 500, "lines": [L("ビールな。", "smile")]}],
                  "ask": [L("何にする？　ラーメンかビールだ。")],
                  "prices": [L("{item}は{price}円。")],
                  "bill": [L("お代は{total}円だ。")]},
         "recall": {"lines": [L("言ったろ、{said}")]},
         "echo": {"lines": [L("{word}？　知らねえなあ。")]}},
        {"id": "由美", "name": "由美", "aliases": ["由美", "由美ちゃん"], "expressions": ["neutral", "smile"],
         "knowledge": [
             {"info": "店を継ぎたいのは父に内緒", "condition": "", "words": ["継ぐ", "跡継ぎ"],
              "lines": [L("実は継ぎたいの。お父さんには内緒ね。", "smile", secret_from=["大将"]),
                        L("……その話はあとでね。")]},
         ],
         "fallbacks": [{"id": "由美-1", "text": "ふうん。"}]},
    ],
    "places": [
        {"id": "屋台", "aliases": ["店"], "people": ["大将", "由美"], "responder": "大将", "exits": ["裏"]},
        {"id": "裏", "aliases": ["裏の公園"], "people": ["由美"], "exits": ["屋台"]},
    ],
    "intents": [
        {"id": "屋号", "description": "屋台の名前", "words": ["屋号", "名前", "のれん"], "examples": ["この店の名前は？"],
         "name": "屋号のこと"},
        {"id": "音楽", "description": "流れている音楽", "words": ["曲", "音楽", "ラジオ"], "name": "音楽のこと"},
        {"id": "仕込み", "description": "スープの仕込み", "words": ["スープ", "仕込み", "豚骨"], "name": "スープのこと"},
    ],
    "scenes": [{"place": "屋台", "lines": [
        {"id": "S1", "speaker": "大将", "condition": "開始", "text": "らっしゃい。うちの豚骨スープは十二時間煮込みだ。"}]}],
}


def stall(**changes: Any) -> Conversation:
    data = copy.deepcopy(STALL)
    data.update(changes)
    return conversation_of(data, "stall.json")


def words(played) -> str:
    return "".join([a.text for a in played.before] + ([played.answer.text] if played.answer else []) +
                   [line.text for line in played.step.lines])


# ---------------------------------------------------------------- what the line asks about

def test_reading_whom_a_line_is_about_and_what_it_asks():
    reader = FocusReader(SceneNames.of(stall().scenario))
    asked = reader.read("大将のお名前は？")
    assert asked.about == ("大将",) and asked.head_word == "名前" and asked.question
    called = reader.read("大将、由美ちゃんとはどういう関係？")
    assert called.called == "大将" and called.about == ("由美",) and called.head_word == "関係"
    thing = reader.read("この店の名前は？")
    assert thing.thing and thing.subjects("大将") == ()
    assert reader.read("お名前は？").subjects("大将") == ("大将",)      # nobody named: the one asked
    playing = reader.read("今流れてる曲、誰の？")
    assert playing.head_word == "曲" and playing.in_phrase(playing.text.index("流れてる"), playing.text.index("曲"))
    assert reader.read("ねえ、あれってどうなったの？").vague and not reader.read("あれ、もう閉店？").vague
    assert reader.read("先代がつけたんですか？").head is None     # a verb ends it: its nouns are arguments


def test_what_a_line_takes_back_and_its_parts():
    assert taken_back("店の名前じゃなくて、大将の名前！") == ("大将の名前!", "店の名前")
    assert taken_back("ラジオの話してないって。今の曲は？") == ("今の曲は?", "ラジオ")
    assert taken_back("大将の名前は？") == ("大将の名前は?", "")
    # a thing turned down is taken back too, whatever follows
    assert taken_back("いいね。ラーメンはやめとけ、ビールがいい") == ("いいね。ビールがいい", "ラーメン")
    assert taken_back("常連じゃないぞ。まあいい") == ("まあいい", "常連")
    assert taken_back("瓶はダメ。生で") == ("生で", "瓶")
    assert taken_back("いいじゃない？") == ("いいじゃない?", "")        # a tag question takes nothing back
    assert taken_back("これ、だめかな") == ("これ、だめかな", "")     # asking whether, not turning down
    assert parts("ラーメンください。あとトイレどこ？") == ["ラーメンください。", "あとトイレどこ?"]
    assert parts("乾杯！ところで由美ちゃんって何歳？") == ["乾杯!", "ところで由美ちゃんって何歳?"]


def test_a_fact_about_the_one_asked_answers_before_the_topic_word():
    [name] = play(stall(), "大将のお名前は？")
    assert name.answer.text.startswith("源三") and name.context["fact"] == "knowledge/大将/2"
    assert str(name.input) == "なし"                      # the shop-name topic did not move
    [shop] = play(stall(), "この店の名前は？")
    assert shop.answer.text.startswith("屋号は") and str(shop.input) == "意図:屋号"


def test_a_correction_steers_the_next_answer():
    first, corrected = play(stall(), "この屋台の名前、教えて", "店の名前じゃなくて、大将の名前！")
    assert first.answer.text.startswith("屋号は")
    assert corrected.answer.text.startswith("源三") and corrected.context["taken_back"] == "店の名前"


def test_the_questions_head_decides_over_a_topic_word_elsewhere():
    [song] = play(stall(), "今流れてる曲って誰の？")
    assert song.answer.text.startswith("ラジオの演歌") and str(song.input) == "なし"
    [music] = play(stall(), "音楽は好き？")
    assert str(music.input) == "意図:音楽"


def test_a_question_about_two_people_is_answered_by_who_knows_them():
    [relation] = play(stall(), "二人ってどういう関係なの？")
    assert relation.answer.text.startswith("由美は娘") and relation.answer.speaker == "大将"


# ---------------------------------------------------------------- two parts of one line

def test_an_order_and_a_question_in_one_line_are_both_answered():
    [both] = play(stall(), "ラーメンください。あとトイレどこ？")
    assert both.answer.text == "へい、ラーメン一丁。便所は裏の公園だ。"
    assert both.memory.orders == ["ラーメン"] and both.context["parts"]["side"] == "ラーメンください。"


def test_two_speakers_answer_two_parts_each_in_turn():
    [both] = play(stall(), "ラーメンください。あと由美ちゃん、跡継ぎって考えてる？")
    assert [a.speaker for a in both.before] == ["大将"] and both.before[0].text == "へい、ラーメン一丁。"
    assert both.answer.speaker == "由美" and both.answer.text == "……その話はあとでね。"


# ---------------------------------------------------------------- prices and the bill

def test_a_price_asked_and_the_bill_of_what_was_ordered():
    price, _, _, bill = play(stall(), "ラーメンっていくら？", "ラーメンください", "ビール！", "お勘定")
    assert price.answer.text == "ラーメンは800円。" and price.context.get("order") is None
    assert bill.answer.text == "お代は1,300円だ。"


# ---------------------------------------------------------------- vague pointers and echo

def test_a_vague_pointer_takes_the_recent_topic_or_asks_which():
    _, vague = play(stall(), "スープの仕込みって大変？", "で、あれってどうなの？")
    assert str(vague.input) == "意図:仕込み" and vague.context["vague"] == "意図:仕込み"
    [asked] = play(stall(), "ねえ、例の件どうなった？")
    assert asked.clarified and "？" in asked.answer.text


def test_a_thing_nobody_authored_is_taken_up_in_the_characters_voice():
    [echo] = play(stall(), "最近キャンプにはまってて")
    assert echo.answer.text == "キャンプ？　知らねえなあ。" and echo.kind == "echo"


# ---------------------------------------------------------------- consistency

def test_a_secret_is_not_told_in_front_of_the_one_it_is_kept_from():
    [here] = play(stall(), "跡継ぎとか考えてる？", to="由美")
    assert here.answer.text == "……その話はあとでね。"
    conversation = stall()
    state = conversation.rules.start().state
    moved = conversation.play("", state, ConversationMemory(), move="裏")
    alone = conversation.play("跡継ぎとか考えてる？", moved.step.state, moved.memory)
    assert alone.answer.text == "実は継ぎたいの。お父さんには内緒ね。"


def test_what_was_told_is_not_said_again_as_news():
    # S1 told the twelve hours at the start: the topic's line that says it again is not news any more
    [soup] = play(stall(), "スープってどうやって作るの？")
    assert str(soup.input) == "意図:仕込み" and "十二時間" not in soup.answer.text


# ---------------------------------------------------------------- yes and no in context

def test_yes_and_no_are_read_by_the_questions_kind():
    assert question_kind("手伝ってくれない？") == "request" and question_kind("何か飲む？") == "offer"
    assert polarity("大丈夫です", "offer") == "no" and polarity("大丈夫だよ", "request") == "yes"
    assert polarity("いいです", "offer") == "no" and polarity("いいね、飲む", "offer") == "yes"
    assert polarity("いや、やるってば", "request") == "yes" and polarity("いや、それは無理", "request") == "no"
    assert polarity("手伝うのはいいよ。何すればいい？", "request") == "yes"
    assert polarity("全然いいよ！", "request") == "yes" and polarity("結構です", "request") == "no"


# ---------------------------------------------------------------- the format's checks

@pytest.mark.parametrize("change, message", [
    (lambda d: d["characters"][0]["knowledge"][2].update(about=["誰か"]), 'unknown character "誰か" in about'),
    (lambda d: d["characters"][0]["echo"]["lines"].append(L("へえ")), 'an echo line must hold "{word}"'),
    (lambda d: d["characters"][0]["menu"]["bill"].append(L("毎度")), "a bill line must hold {total}"),
    (lambda d: d["characters"][1]["knowledge"][0]["lines"][0].update(secret_from=["誰か"]),
     'unknown character "誰か" in secret_from'),
])
def test_the_new_keys_are_checked_at_load(change, message):
    data = copy.deepcopy(STALL)
    change(data)
    with pytest.raises(ScenarioError) as raised:
        load_scenario_data(data, source="stall.json")
    assert message in str(raised.value)


def test_a_thing_turned_down_does_not_answer():
    for text, answer in (("トイレじゃないぞ。屋号は？", "屋号は"), ("トイレの話はやめとけ。スープは何で取ってる？", "")):
        [played] = play(stall(), text)
        assert "便所" not in played.answer.text and answer in played.answer.text, text
