"""The conversation layer (chalicelib/conversation) on a small scenario of its own and on the reference one:
replies to a character's question, facts said before, orders and flags, clarify, no repeats, story lines that
need their topic named, the ended game, and the memory that goes into the turn's one write."""
from __future__ import annotations

import copy
from typing import Any

from chalicelib.conversation import Conversation
from chalicelib.conversation.variety import PER_GAME, WINDOW
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.scenario import GameRules, PlayerInput, load_scenario, load_scenario_data
from chalicelib.stage.records import ConversationMemory, DirectorMemory
from tests.conftest import ROOT
from tests.director.playing import L, conversation_of, play

CAFE: dict[str, Any] = {
    "title": "夜の喫茶",
    "start": {"place": "店"},
    "characters": [
        {"id": "店主", "name": "マスター", "aliases": ["マスター"], "expressions": ["neutral", "smile"],
         "knowledge": [
             {"info": "猫の名前はミケ", "condition": "意図:猫",
              "lines": [L("うちの猫はミケっていうんだ。十年いる。", "smile"), L("ミケは雨の日はずっと寝てるよ。")]},
             {"info": "開店して二十年", "condition": "", "words": ["何年", "いつから"],
              "lines": [L("この店？　二十年になるね。")]},
         ],
         "reactions": [
             {"act": "挨拶", "lines": [L("いらっしゃい。", "smile"), L("どうも。", "smile")]},
             {"act": "同意", "lines": [L("だろう？", "smile")]},
             {"act": "反対", "lines": [L("そうかな。")]},
         ],
         "fallbacks": [{"id": "店主-1", "text": "ふうん。"}, {"id": "店主-2", "text": "なるほどね。"}],
         "menu": {"items": [{"id": "コーヒー", "words": ["コーヒー", "珈琲", "ブレンド"], "flag": "一杯目",
                             "lines": [L("はい、ブレンド。", "smile"), L("おかわりね。", "smile")]},
                            {"id": "カレー", "words": ["カレー"], "lines": [L("カレー、少し辛いよ。")]}],
                  "ask": [L("何にする？　コーヒーかカレーだよ。")],
                  "missing": [L("それはうちにはないなあ。")]},
         "recall": {"lines": [L("言ったろう、{said}")]},
         "clarify": {"lines": [L("{1}？　{2}？")]},
         "chatter": {"lines": [L("そういえば、新しい豆を仕入れたんだ。"), L("今夜は静かだね。")]}},
        {"id": "客", "name": "常連", "aliases": ["常連さん"], "expressions": ["neutral"],
         "reactions": [{"act": "同意", "lines": [L("でしょ。")]}],
         "fallbacks": [{"id": "客-1", "text": "へえ。"}],
         "menu": {"missing": [L("注文はマスターにね。")]}},
    ],
    "places": [
        {"id": "店", "aliases": ["店内"], "people": ["店主", "客"], "responder": "店主", "exits": ["裏"]},
        {"id": "裏", "aliases": ["裏口"], "people": ["客"], "exits": ["店"]},
    ],
    "intents": [
        {"id": "猫", "description": "店の猫について", "words": ["猫", "ミケ"], "name": "猫のこと"},
        {"id": "天気", "description": "天気について", "words": ["天気", "雨"], "name": "天気のこと"},
        {"id": "写真", "description": "写真について", "words": ["写真"]},
    ],
    "clarify": {"ambiguous": {"雨": ["猫", "天気"]}},
    "scenes": [
        {"place": "店", "lines": [
            {"id": "Q1", "speaker": "店主", "condition": "開始", "text": "雨だね。……猫は好きかい？",
             "replies": {"yes": [L("そりゃよかった。", "smile")], "no": [L("そうか、残念。")]}},
            {"id": "S1", "speaker": "店主", "condition": "意図:写真", "text": "写真はミケが嫌がるんだ。"},
            {"id": "F1", "speaker": "店主", "condition": "入力 + フラグ:一杯目 + 未:F1", "text": "一杯目はサービスだよ。"},
            {"id": "R1", "speaker": "客", "condition": "意図:天気", "repeatable": True, "text": "雨の日はいい。"},
        ]},
    ],
}


def cafe(**changes: Any) -> Conversation:
    data = copy.deepcopy(CAFE)
    data.update(changes)
    return conversation_of(data, "cafe.json")


def said(played) -> list[str]:
    return ([played.answer.text] if played.answer else []) + [line.text for line in played.step.lines]


# ---------------------------------------------------------------- replies to a question

def test_a_yes_after_a_characters_question_is_an_answer_to_it():
    [yes] = play(cafe(), "うん、大好き")
    assert yes.kind == "reply" and yes.answer.text == "そりゃよかった。" and yes.answer.speaker == "店主"
    assert yes.context["reply"] == {"to": "line/Q1", "as": "yes"}
    [no] = play(cafe(), "いや、苦手かな")
    assert no.kind == "reply" and no.answer.text == "そうか、残念。"


def test_a_question_back_or_another_act_is_not_an_answer():
    [back] = play(cafe(), "マスターは好きなの？")
    assert back.kind != "reply"
    [greeting] = play(cafe(), "こんばんは")
    assert greeting.kind == "reaction" and greeting.answer.text == "いらっしゃい。"


def test_without_authored_replies_the_askers_agreement_reaction_answers():
    data = copy.deepcopy(CAFE)
    del data["scenes"][0]["lines"][0]["replies"]
    rules = GameRules(load_scenario_data(data, source="cafe.json"))
    [yes] = play(Conversation(rules, Interpreter(rules)), "うん、そう思う")
    assert yes.kind == "reply" and yes.answer.text == "だろう？"


def test_a_question_stays_open_a_few_turns_for_a_clear_answer():
    *_, late_yes = play(cafe(), "こんばんは", "今夜は静かですね", "うん、好き")
    assert late_yes.kind == "reply" and late_yes.answer.text == "そりゃよかった。"
    *_, unclear = play(cafe(), "こんばんは", "今夜は静かですね", "どうかな")
    assert unclear.kind != "reply"                  # only the very next line answers with neither yes nor no
    *_, too_late = play(cafe(), "こんばんは", "今夜は静かですね", "ふむ", "うん、好き")
    assert too_late.kind != "reply"
    _, answered_twice = play(cafe(), "うん、好き", "うん")
    assert answered_twice.kind != "reply"            # answered once: closed


# ---------------------------------------------------------------- facts said before

def test_a_question_about_what_was_said_gets_that_sentence_back():
    conversation = cafe()
    _, told, again = play(conversation, "こんばんは", "猫の話を聞かせて", "で、猫は何年いるんだっけ？")
    assert told.answer.text == "うちの猫はミケっていうんだ。十年いる。"
    assert again.kind == "recall" and again.answer.text == "言ったろう、十年いる。"


def test_a_question_is_answered_from_a_line_not_said_yet_when_it_fits():
    [asked] = play(cafe(), "このお店、いつからやってるんですか？")
    assert asked.answer.text == "この店？　二十年になるね。"


# ---------------------------------------------------------------- orders and flags

def test_an_order_of_a_menu_item_is_served_and_sets_its_flag():
    conversation = cafe()
    first, second = play(conversation, "ブレンドください", "こんばんは")
    assert first.kind == "order" and first.answer.text == "はい、ブレンド。" and first.input == PlayerInput.none()
    assert first.answer.detail["order"]["item"] == "コーヒー"
    assert "一杯目" in first.step.state.flags and first.memory.orders == ["コーヒー"]
    # フラグ:一杯目 set by the order lets the progression line that waits on it follow in the same turn
    assert [line.id for line in first.step.lines] == ["F1"] and not second.step.lines


def test_again_ask_and_missing():
    _, again, ask, missing = play(cafe(), "コーヒーひとつ", "おかわり！", "何か飲み物ちょうだい", "ラーメンありますか")
    assert again.kind == "order" and again.answer.text == "おかわりね。"
    assert ask.kind == "menu" and ask.answer.text.startswith("何にする")
    assert missing.kind == "menu" and missing.answer.text == "それはうちにはないなあ。"


def test_talking_about_an_item_is_not_ordering_it():
    [about] = play(cafe(), "カレーってどんな味？")
    assert about.kind != "order"


def test_whoever_serves_the_item_serves_it_and_nobody_here_says_so():
    conversation = cafe()
    [served] = play(conversation, "常連さん、コーヒーください")
    assert served.answer.speaker == "店主" and served.kind == "order"     # the addressed one has no such item
    back = conversation.rules.handle(PlayerInput.move("裏"), conversation.rules.start().state).state
    [nobody] = play(conversation, "コーヒーください", state=back)
    assert nobody.answer.speaker == "客" and nobody.answer.text == "注文はマスターにね。"


def test_a_yes_to_an_offer_is_the_order():
    conversation = cafe()
    state = conversation.rules.start().state
    first = conversation.play("何か飲み物ちょうだい", state, ConversationMemory())     # 何にする？
    assert first.memory.question is not None and first.memory.question.kind == "offer"
    second = conversation.play("じゃあカレー", first.step.state, first.memory)
    assert second.kind == "order" and second.answer.detail["order"]["item"] == "カレー"


# ---------------------------------------------------------------- clarify

def test_an_ambiguous_word_is_asked_about_and_the_next_turn_settles_it():
    conversation = cafe()
    asked, settled = play(conversation, "こんばんは、雨の話なんだけど", "猫のほう")
    assert asked.clarified and asked.answer.text in ("猫のこと？　天気のこと？", "天気のこと？　猫のこと？")
    assert asked.step.state.turn == 1 and asked.step.lines == ()          # the rules did not play this turn
    assert settled.input == PlayerInput.intent("猫") and settled.context["clarify"] == {"resolved": "意図:猫"}


def test_an_ordinal_settles_it_and_another_topic_drops_it():
    conversation = cafe()
    asked, second = play(conversation, "雨の話なんだけど", "後のほう")
    assert second.input == PlayerInput.parse(asked.memory.clarify.options[1])
    _, other = play(conversation, "雨の話なんだけど", "写真撮ってもいい？")
    assert other.input == PlayerInput.intent("写真") and not other.clarified


def test_clarify_off_takes_the_better_guess():
    [guessed] = play(cafe(clarify={"ask": False, "ambiguous": {"雨": ["猫", "天気"]}}), "雨の話なんだけど")
    assert not guessed.clarified and guessed.input.kind == "intent"


def test_the_topic_of_the_last_turns_settles_an_ambiguous_word():
    conversation = cafe()
    _, on_cats = play(conversation, "猫の話を聞かせて", "雨の日はどうしてる？")
    assert not on_cats.clarified and on_cats.input == PlayerInput.intent("猫")


# ---------------------------------------------------------------- no repeats; story lines

def test_no_line_twice_within_the_window_and_the_least_said_when_nothing_fits():
    conversation = cafe()
    turns = play(conversation, *["ふむ"] * 6)
    texts = [t.answer.text for t in turns]
    assert len(set(texts[:4])) == 4                                     # chatter, chatter, fallbacks
    assert all(texts.count(t) <= PER_GAME for t in texts) and WINDOW > len(texts)
    assert turns[-1].kind == "fallback"                                 # nothing fresh: a fallback all the same


def test_a_story_line_needs_its_topic_named():
    conversation = cafe()
    # 画像 is near 写真 in meaning only: the topic may be guessed, the story line S1 does not fire
    [guess] = play(conversation, "画像ってある？")
    assert "S1" not in [line.id for line in guess.step.lines]
    [named] = play(conversation, "写真ってある？")
    assert [line.id for line in named.step.lines] == ["S1"]


def test_a_repeatable_line_fires_again():
    conversation = cafe()
    first, second = play(conversation, "天気の話しよう", "今日の天気は？")
    assert [line.id for line in first.step.lines] == ["R1"] and [line.id for line in second.step.lines] == ["R1"]


# ---------------------------------------------------------------- the ended game and the stored memory

def test_after_an_ending_nothing_is_played_or_announced():
    rules = GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))
    conversation = Conversation(rules, Interpreter(rules))
    ended = rules.handle(PlayerInput.leave(), rules.start().state).state
    played = conversation.play("まだいるよ", ended, ConversationMemory())
    assert played.step.notices == () and played.step.lines == () and played.answer is None
    assert played.step.state.ended and played.step.state.turn == ended.turn + 1


def test_the_memory_round_trips_in_the_directors_memory():
    [order] = play(cafe(), "コーヒーください")
    stored = DirectorMemory(game=3, conversation=order.memory).to_json()
    back = DirectorMemory.read(stored)
    assert back.conversation == order.memory and back.conversation.orders == ["コーヒー"]
    assert back.conversation.said["menu/店主/コーヒー#1"] == [1]


# ---------------------------------------------------------------- what is not served, how, and for whom

def bar() -> Conversation:
    data = copy.deepcopy(CAFE)
    menu = data["characters"][0]["menu"]
    menu["items"][0]["kind"] = "drink"
    menu["items"][1]["kind"] = "food"
    menu["items"].append({"id": "紅茶", "kind": "drink", "words": ["紅茶"], "lines": [L("紅茶、濃く出たよ。")]})
    menu["unavailable"] = [L("{item}はないんだ。{menu}ならあるよ。"), L("{item}は置いてなくてね。")]
    menu["suggest"] = [L("{menu}ならすぐ出せるよ。")]
    menu["styles"] = [L("{item}を{style}で、了解。")]
    menu["treat"] = [L("おっ、ごちそうになるよ。{item}、いただきます。", "smile")]
    data["characters"][1]["menu"]["treat"] = [L("悪いね、ありがとう。")]
    return conversation_of(data, "bar.json")


def test_an_item_not_served_is_said_missing_with_what_there_is():
    [missing] = play(bar(), "ワインってあります？")
    assert missing.kind == "menu" and missing.answer.text == "ワインはないんだ。コーヒー、紅茶ならあるよ。"


def test_an_item_inside_a_longer_word_is_not_served_in_its_place():
    [jelly] = play(bar(), "コーヒーゼリーをひとつください")
    assert jelly.kind == "menu" and jelly.answer.text.startswith("コーヒーゼリーはないんだ")


def test_the_fallback_is_served_when_the_first_is_not_here():
    [fallback] = play(bar(), "ジンジャーエールってないですか？なかったら紅茶で")
    assert fallback.kind == "order" and fallback.answer.detail["order"]["item"] == "紅茶"
    assert fallback.answer.text == "ジンジャーエールは置いてなくてね。紅茶、濃く出たよ。"


def test_a_thing_named_for_the_item_that_is_not_here_is_said():
    # a kind not held (ブランデーの紅茶) is said not to be had, with what is; the plain tea is not served unasked
    [made] = play(bar(), "ブランデーの紅茶をください")
    assert made.answer.detail["order"]["kind"] == "missing" and made.memory.orders == []
    assert "ブランデーの紅茶" in made.answer.text, made.answer.text


def test_a_style_is_acknowledged_and_a_drink_just_served_is_made_again_that_way():
    conversation = bar()
    strong, weaker = play(conversation, "紅茶、うすめでお願いします", "やっぱり濃いのは苦手で、もう少し軽くしてもらえる？")
    assert strong.answer.text == "紅茶を薄めで、了解。"                   # not 「濃く出たよ」
    assert weaker.kind == "order" and weaker.answer.text == "紅茶を軽めで、了解。"
    assert weaker.memory.orders == ["紅茶"]                               # the same cup, not a second one


def test_a_request_for_something_to_drink_lists_the_drinks():
    asked, switched = play(bar(), "なにか軽めのドリンクってあります？", "カレーもいいけど、先に飲み物を")
    assert asked.answer.text == "コーヒー、紅茶ならすぐ出せるよ。"
    assert switched.answer.text == "コーヒー、紅茶ならすぐ出せるよ。"


def test_a_treat_is_thanked_for_by_the_one_treated():
    conversation = bar()
    [host] = play(conversation, "マスターにもコーヒーを一杯")
    assert host.answer.speaker == "店主" and host.answer.text == "おっ、ごちそうになるよ。コーヒー、いただきます。"
    [regular] = play(conversation, "常連さんに一杯おごりますよ")
    assert regular.answer.speaker == "客" and regular.answer.text == "悪いね、ありがとう。"


# ---------------------------------------------------------------- terse orders, parts, asking after, paying

def diner() -> Conversation:
    data = copy.deepcopy(CAFE)
    menu = data["characters"][0]["menu"]
    menu["items"][0].update(kind="drink", price=400, about={"words": ["豆", "産地", "キリマンジャロ"],
                                                            "lines": [L("豆はキリマンジャロだよ。")]})
    menu["items"][1].update(kind="food", price=700)
    menu["items"].append({"id": "おにぎり", "kind": "food", "price": 200, "words": ["おにぎり"],
                          "parts": ["梅", "鮭", "昆布"], "lines": [L("おにぎり、どうぞ。")]})
    menu.update(unavailable=[L("{item}はないんだ。{menu}ならあるよ。")], styles=[L("{item}を{style}で、了解。")],
                parts=[L("{parts}だね。はい、{item}。")], extras=[L("{extra}ね、了解。")],
                coming=[L("お待たせ、{item}だよ。")], bill=[L("{total}円です。")], paid=[L("はい、確かに。毎度どうも。")])
    return conversation_of(data, "diner.json")


def test_a_thing_named_alone_or_with_kure_is_an_order():
    shochu, plum, curry = play(diner(), "焼酎くれ", "梅酒。ロックでな", "カレーくれよ")
    assert shochu.kind == "menu" and shochu.answer.text.startswith("焼酎はないんだ")
    assert plum.kind == "menu" and plum.answer.text.startswith("梅酒はないんだ")      # never 「梅酒？　もっと聞かせて」
    assert curry.kind == "order" and curry.answer.detail["order"]["item"] == "カレー"
    [toast] = play(diner(), "かんぱーい！")
    assert toast.kind != "menu"                                                    # near drink, no order


def test_the_parts_and_the_style_asked_for_are_named_not_renamed():
    [both] = play(diner(), "おにぎり。梅と鮭、海苔多めで")
    assert both.answer.text == "梅と鮭を海苔多めで、了解。"
    [parts] = play(diner(), "おにぎり、梅と昆布ちょうだい")
    assert parts.answer.text == "梅と昆布だね。はい、おにぎり。" and parts.memory.orders == ["おにぎり"]


def test_a_condiment_or_a_change_asked_for_the_order_just_served_is_acknowledged():
    conversation = diner()
    _, swap, condiment = play(conversation, "カレーひとつ", "ソースじゃなくてマヨネーズな", "福神漬けでいいや")
    assert swap.kind == "order" and swap.answer.text == "マヨネーズね、了解。"
    assert condiment.answer.text == "福神漬けね、了解。" and condiment.memory.orders == ["カレー"]
    # a thing named with only な/ね after it is asked for when it is something to eat or put on it
    _, cheese, chat = play(conversation, "カレーひとつ", "チーズな", "演歌な")
    assert cheese.kind == "order" and "チーズ" in cheese.answer.text
    assert chat.kind != "order" and "了解" not in chat.answer.text


def test_a_thing_taken_out_is_a_change_to_the_dish_never_an_order_of_it():
    conversation = diner()
    _, leek, ice = play(conversation, "カレーひとつ", "にんじん抜いてくれる？嫌いでさ", "コーヒーも。氷なしで頼む")
    assert leek.kind == "order" and leek.answer.text == "にんじん抜きね、了解。"
    assert "はないんだ" not in leek.answer.text and leek.memory.orders == ["カレー"]
    assert ice.answer.detail["order"]["item"] == "コーヒー"
    [named] = play(diner(), "カレー、玉ねぎなしってできる？")
    assert named.answer.detail["order"]["item"] == "カレー" and "玉ねぎなし" in named.answer.text


def test_asking_after_an_item_ordered_brings_it():
    conversation = diner()
    _, _, late, later = play(conversation, "カレーをお願い", "今夜は静かだね", "カレーまだ？腹ぺこだよ",
                             "俺の注文はいつ来るんだ")
    assert late.answer.text == "お待たせ、カレーだよ。" and late.memory.orders == ["カレー"]
    assert later.answer.text == "お待たせ、カレーだよ。"
    [first] = play(diner(), "カレーまだ？")                # not ordered yet: ordered now
    assert first.answer.detail["order"]["kind"] == "item"
    # 「いや、さっき頼んだよ」: no refusal of anything, the order said again
    _, again = play(diner(), "カレーをお願い", "いや、さっき頼んだよ")
    assert again.answer.text == "お待たせ、カレーだよ。" and again.memory.orders == ["カレー"]


def test_money_handed_over_after_the_bill_is_thanked_for():
    conversation = diner()
    _, bill, paid = play(conversation, "カレーください", "お会計", "はい、千円。おつりはいいよ")
    assert bill.answer.text == "700円です。"
    assert paid.answer.text == "はい、確かに。毎度どうも。"


def test_a_question_about_the_item_served_is_answered_from_its_about_lines():
    conversation = diner()
    _, beans = play(conversation, "コーヒーを一杯", "豆は何を使ってるの？")
    assert beans.answer.text == "豆はキリマンジャロだよ。"
    [named] = play(diner(), "コーヒーの産地ってどこ？")
    assert named.answer.text == "豆はキリマンジャロだよ。"
