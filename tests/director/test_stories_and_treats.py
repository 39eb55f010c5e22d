"""A story the player tells is answered as a story, and a treat only wished, promised for another day or spoken of
as on the bill treats nobody — on both example scenarios, with lines of our own (variants of what blind players
met, not their sentences)."""
from __future__ import annotations

from functools import cache

from chalicelib.conversation import Conversation
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.scenario import GameRules, load_scenario
from tests.conftest import ROOT
from tests.director.playing import play, visit


@cache
def florist() -> Conversation:
    rules = GameRules(load_scenario(ROOT / "scenarios" / "hanaya.json"))
    return Conversation(rules, Interpreter(rules))


def deliberated(played) -> list[dict]:
    return played.context.get("deliberation", []) if played.context else []


def test_a_word_of_a_story_before_its_last_sentence_is_a_weak_guess_that_a_reaction_beats():
    # the station, in a sentence of the player's own day: not a question about the way to the station
    *_, told = visit("こんばんは", "昨日ね、駅で昔の同級生に会ったんだよ。二十年ぶりでさ、向こうはすっかりおじさんになってて笑った")
    assert not (told.answer.ref or "").startswith("knowledge/"), told.answer.text
    weak = [c for c in deliberated(told) if c["outcome"] == "weak"]
    assert weak and "story" in weak[0]["why"]
    # the same word asked about is answered from what the character knows
    *_, asked = visit("こんばんは", "駅までってどうやって行くの？")
    assert (asked.answer.ref or "").startswith("knowledge/"), asked.answer.text


def test_a_story_names_no_topic_guessed_by_meaning_alone():
    *_, told = visit("こんばんは", "この前、タクシーで酔ったお客さんを家まで送ったんだ。降りるときに何度もお礼を言われてさ")
    assert told.step.input is None or str(told.step.input) == "なし" or told.context.get("story_not_topic"), \
        told.context


def test_on_the_second_example_too_a_story_is_taken_up_as_the_players_story():
    *_, told = play(florist(), "こんにちは", "去年の夏、実家の庭で孫と一緒に野菜を育てたんです。毎朝水をやって、大きなトマトがとれました")
    assert told.answer is not None and told.answer.ref.startswith("reaction/千代/身の上"), told.answer.ref
    assert told.memory.orders == []


def test_a_treat_wished_promised_or_spoken_of_treats_nobody_and_a_treat_now_still_does():
    for line in ("ごちそうしたいけど今月ピンチなんだよね", "今度来たときは絶対おごるからね", "おごりって勘定に入ってないよね？"):
        *_, said = visit("こんばんは", "ビールください", line)
        assert said.memory.orders == ["ビール"], (line, said.memory.orders, said.answer.text)
    *_, treated = visit("こんばんは", "ビールください", "ママも一杯どうぞ、おごるよ")
    assert treated.context.get("order", {}).get("kind") == "treat", treated.context


def test_a_line_that_opens_by_echoing_one_of_its_entrys_words_takes_up_the_word_the_player_said():
    import copy

    from tests.director.playing import L, conversation_of
    from tests.director.test_conversation import CAFE
    data = copy.deepcopy(CAFE)
    data["characters"][0]["knowledge"].append(
        {"info": "砂糖とミルクはカウンターにある", "condition": "", "words": ["砂糖", "ミルク", "ストロー"],
         "lines": [L("砂糖？　そこにあるよ。好きに使って。")]})
    conv = conversation_of(data, "cafe.json")
    [asked] = play(conv, "ストローもらえますか？")
    assert asked.answer.text == "ストロー？　そこにあるよ。好きに使って。", asked.answer.text
    [same] = play(conv, "砂糖ある？")
    assert same.answer.text.startswith("砂糖？")
    # a question asking what something is called keeps the line as written: its first word is the answer
    data["characters"][0]["knowledge"].append(
        {"info": "犬の名前はポチ", "condition": "", "words": ["犬", "ポチ"], "lines": [L("ポチ？　うちの犬だよ。")]})
    [named] = play(conversation_of(data, "cafe.json"), "犬の名前、なんだっけ？")
    assert named.answer.text.startswith("ポチ"), named.answer.text
