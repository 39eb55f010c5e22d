"""いや that corrects rather than refuses, a liking for things as they are to a proposed change, the player's own
life told (not a character's fact, and remembered when told again), and a choice settled with the player
(chalicelib/conversation/questions.py, own.py, choices.py), on a small scenario of its own."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from chalicelib.conversation import Conversation
from chalicelib.conversation.own import about_self, told_again
from chalicelib.conversation.questions import polarity, proposes_change
from chalicelib.interpret.acts import ActRecogniser
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.scenario import GameRules, load_scenario_data
from chalicelib.scenario.loader import ScenarioError
from tests.director.playing import L, conversation_of, play
from tests.director.playing import answered as said

BAR: dict[str, Any] = {
    "title": "港の酒場",
    "start": {"place": "酒場"},
    "characters": [
        {"id": "マスター", "name": "マスター", "aliases": ["マスター"], "expressions": ["neutral", "smile"],
         "knowledge": [
             {"info": "奥さんがジャズを許してくれたらうれしい", "condition": "", "words": ["許してくれた", "いいって言って"],
              "lines": [L("本当かい？　そりゃうれしいね。", "smile")]},
             {"info": "定休日は月曜", "condition": "済:S1", "words": ["休み", "定休日"], "lines": [L("うちの休みは月曜だよ。")]},
             {"info": "今夜の一曲は演歌に決める", "condition": "", "choice": "今夜の一曲",
              "words": ["演歌がいい", "演歌にしよ", "演歌で"], "lines": [L("演歌だな。よし、決まりだ。", "smile")]},
             {"info": "今夜の一曲はジャズに決める", "condition": "", "choice": "今夜の一曲",
              "words": ["ジャズがいい", "ジャズにしよ", "ジャズで"], "lines": [L("ジャズか。いいね、決まりだ。", "smile")]},
         ],
         "reactions": [{"act": "挨拶", "lines": [L("いらっしゃい。", "smile")]},
                       {"act": "身の上", "lines": [L("へえ、そうなのかい。"), L("ほう、それで？")]},
                       {"act": "質問", "lines": [L("さあね。")]}],
         "fallbacks": [{"id": "マスター-1", "text": "ふうん。"}],
         "echo": {"lines": [L("{word}か。")]},
         "told": {"lines": [L("{word}だったね。覚えてるよ。", "smile")]}},
    ],
    "places": [{"id": "酒場", "aliases": ["店"], "people": ["マスター"], "responder": "マスター"}],
    "intents": [{"id": "音楽", "description": "店の音楽", "words": ["音楽", "レコード"], "name": "音楽のこと"}],
    "scenes": [{"place": "酒場", "lines": [
        {"id": "S1", "speaker": "マスター", "condition": "開始", "text": "いらっしゃい。今夜は何をかけようか。"}]}],
}


def bar(**changes: Any) -> Conversation:
    data = copy.deepcopy(BAR)
    data.update(changes)
    return conversation_of(data, "bar.json")


# ---------------------------------------------------------------- いや: a refusal, or a correction

def test_a_leading_iya_that_corrects_is_no_refusal():
    assert polarity("いや、さっき頼みましたよ、ケチャップ多めで", "offer") is None
    assert polarity("いや、だから今のままがいいって", "yes_no") is None
    assert polarity("いやいや食べたいです", "offer") == "yes"
    assert polarity("いや、別にどっちでもいいかな", "yes_no") == "other"
    # a refusal or a turning down after it still says no
    for text in ("いや", "いや、いい", "いや、結構です", "いや、やめとく", "いや、苦手かな", "いや、ないな", "いやだ"):
        assert polarity(text, "offer") == "no", text
    acts = ActRecogniser()
    assert acts.recognise("いや、さっき頼みましたよ").act != "反対"
    assert acts.recognise("いや、お店のいいところです").act != "反対"
    assert acts.recognise("いや、結構です").act == "反対" and acts.recognise("いや").act == "反対"
    assert acts.recognise("いやいや、ないでしょ").act == "反対"
    # musing about one's own life is telling, not asking; asking leave (いいかな) still asks
    assert acts.recognise("僕はフリーでカメラマンをしてます。古い建物を撮るのが多いかな").act == "身の上"
    assert acts.recognise("俺は毎日ここに来てもいいかな").act == "質問"


def test_a_liking_for_things_as_they_are_answers_a_proposed_change_no():
    asked = "ねえ、このお店、もうちょっと明るくしたら若い人も入りやすいと思わない？"
    assert proposes_change(asked) and not proposes_change("何か飲む？")
    assert proposes_change("……あなたはどう思う？", "このお店、来月から少し変えようと思ってるの。")
    assert not proposes_change("……あなたはどう思う？", "今夜は雨ね。")
    assert polarity("僕は今の薄暗い感じが好き", "yes_no", change=True) == "no"
    assert polarity("このままがいいな", "yes_no", change=True) == "no"
    assert polarity("僕は今の薄暗い感じが好き", "yes_no") == "yes"      # to another question, a liking is a yes
    assert polarity("うん、いいと思う", "yes_no", change=True) == "yes"


# ---------------------------------------------------------------- the player's own life

def test_what_the_player_tells_of_themselves_is_remembered():
    assert about_self("僕、カメラマンなんです") and about_self("私は毎週末、釣りに行ってるんです")
    assert not about_self("僕のこと覚えてる？") and not about_self("ママ、カメラマンなの？")
    told: dict[str, int] = {}
    assert told_again(told, ["カメラマン"], 2) is None
    assert told_again(told, ["趣味", "カメラマン"], 5) == "カメラマン"      # a frame (趣味) is not the thing told
    assert told_again(told, ["趣味", "映画"], 6) is None


def test_the_players_own_days_off_are_not_the_shops():
    [own] = play(bar(), "僕も休みは喫茶店めぐりが趣味なんです")
    assert "月曜" not in said(own) and own.answer.act == "身の上"
    assert own.context.get("own_life") == "knowledge/マスター/1"
    [asked] = play(bar(), "お店の休みはいつ？")
    assert "月曜" in said(asked)


def test_the_same_thing_told_again_is_remembered_not_news():
    first, _, again = play(bar(), "僕、カメラマンなんです", "今夜は静かだね", "俺はカメラマンなんですよ")
    assert "覚えてる" not in said(first)
    assert said(again) == "カメラマンだったね。覚えてるよ。" and again.memory.told.get("カメラマン") == 3


def test_a_told_line_must_hold_the_word():
    data = copy.deepcopy(BAR)
    data["characters"][0]["told"] = {"lines": [L("覚えてるよ。")]}
    try:
        load_scenario_data(data, source="bar.json")
    except ScenarioError as error:
        assert "told" in str(error)
    else:
        raise AssertionError("a told line without {word} loaded")


# ---------------------------------------------------------------- a choice settled

def test_a_choice_is_taken_only_from_a_line_that_chooses():
    offer, chose = play(bar(), "演歌で一曲、僕が歌いましょうか", "ジャズがいいな")
    assert "決まり" not in said(offer)
    assert said(chose) == "ジャズか。いいね、決まりだ。"


def test_a_settled_choice_is_not_undone_and_is_told_again():
    _, other, which = play(bar(), "演歌がいいな", "ジャズがいいかなあ", "結局どっちにしたの？")
    assert "ジャズか" not in said(other) and said(other) == "演歌だな。よし、決まりだ。"
    assert said(which) == "演歌だな。よし、決まりだ。" and which.context["choice"] == "knowledge/マスター/2#1"


@pytest.mark.parametrize("change", ["やっぱりジャズにしよう", "演歌じゃなくてジャズで", "うーん、やっぱジャズがいいな"])
def test_a_choice_changed_in_so_many_words_takes_the_other_option(change):
    _, changed, which, back = play(bar(), "演歌がいいな", change, "結局どっちにしたの？", "やっぱり演歌がいいな")
    assert said(changed) == "ジャズか。いいね、決まりだ。"
    assert said(which) == "ジャズか。いいね、決まりだ。"          # the first option is given up
    assert said(back) == "演歌だな。よし、決まりだ。"             # and may be taken again


def test_an_own_life_reaction_takes_up_the_thing_told_where_its_line_has_a_word_slot():
    data = copy.deepcopy(BAR)
    data["characters"][0]["reactions"][1]["lines"] = [L("{word}か。いいねえ。", "smile"), L("へえ、そうなのかい。")]
    rules = GameRules(load_scenario_data(data, source="bar.json"))
    conversation = Conversation(rules, Interpreter(rules))
    [told] = play(conversation, "僕、カメラマンなんです")
    assert said(told) == "カメラマンか。いいねえ。"
    # without a thing to take up, a line with the slot is not said
    found = conversation.answerer.reaction_of("マスター", "身の上", rules.start().state, 1)
    assert found is not None and "{word}" not in found[1]


def test_words_whose_report_is_denied_do_not_answer_for_their_entry():
    from chalicelib.interpret.negated import denied_after
    text = "ママは混ぜてもいいなんて言ってないよ"
    assert denied_after(text, text.index("いい")) and not denied_after("ママが混ぜてもいいって言ってたよ", 8)
    assert not denied_after("考えてくれない？", 2)
    denied, told = play(bar(), "女房はジャズもいいって言ってないよ", "女房がジャズもいいって言ってたよ")
    assert "うれしい" not in said(denied) and said(told) == "本当かい？　そりゃうれしいね。"
