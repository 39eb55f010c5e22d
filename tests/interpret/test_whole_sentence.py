"""Moves and leaves read on the whole sentence, with what the conversation knows (the open question, a recent
invitation, where the player came from), and words read in their sense on the analyser's tokens."""
from __future__ import annotations

import pytest

from chalicelib.interpret.cues import answers_return_question, cancelled, farewell, goes_along, unstretched
from chalicelib.interpret.ja import analyse
from chalicelib.interpret.options import Recent
from chalicelib.interpret.related import IntentMeaning
from chalicelib.interpret.senses import is_counted_quantity, verb_argument
from chalicelib.scenario import PlayerInput
from tests.spec_states import play

MOVE = PlayerInput.move("控え室")
SHOP = PlayerInput.move("店内")


def read(interpreter, rules, setup, text, **recent):
    state = play(rules, setup)
    return interpreter.interpret_turn(text, state, recent=Recent(**recent) if recent else None)


@pytest.mark.parametrize("text", [
    "店に戻ろうかな…いや、もうちょっとここにいよ",
    "店に戻ろうかな、でもやっぱりもう少しいる",
    "戻ろうかなー、いや待って、まだ話したい",
])
def test_a_hedge_taken_back_stays(interpreter, rules, text):
    assert read(interpreter, rules, ["なし", "移動:控え室"], text).input == PlayerInput.none()


def test_a_hedge_then_going_after_all_goes(interpreter, rules):
    assert read(interpreter, rules, ["なし", "移動:控え室"], "店に戻ろうかな、いや、やっぱ戻ろう").input == SHOP


@pytest.mark.parametrize("text", ["『控え室行こう』って言われたんだよね", "葵が控え室に行こうって言ってたよ"])
def test_reported_movement_is_not_a_request(interpreter, rules, text):
    assert read(interpreter, rules, ["なし"], text).input != MOVE


@pytest.mark.parametrize("text", ["じゃ、ちょっと控え室行ってきまーす", "控え室、ちょっと覗いてきまーす"])
def test_casual_lengthened_requests_move(interpreter, rules, text):
    assert read(interpreter, rules, ["なし"], text).input == MOVE


def test_lengthening_marks_go_after_hiragana_only():
    assert unstretched("行ってきまーす") == "行ってきます" and unstretched("ビール") == "ビール"


def test_a_promise_to_come_back_answering_a_question_is_no_goodbye(interpreter, rules):
    asked = "はいはい、お勘定ね。……また来てくれるんでしょ？"
    answer = read(interpreter, rules, ["なし"], "もちろん、また来るよ", asked=asked)
    assert answer.input == PlayerInput.none() and answer.rule == "answer_not_leave"
    assert read(interpreter, rules, ["なし"], "もちろん、また来るよ").input == PlayerInput.leave()   # no question
    assert read(interpreter, rules, ["なし"], "ごちそうさま、また来るよ", asked=asked).input == PlayerInput.leave()
    assert answers_return_question("うん、また来る", asked) and not answers_return_question("うん、また来る", None)


def test_a_recent_invitation_is_taken_up_after_a_refusal(interpreter, rules):
    taken = read(interpreter, rules, ["なし"], "ごめん、冗談だって。やっぱ行く", invited="控え室")
    assert taken.input == MOVE and taken.rule == "invitation"
    assert read(interpreter, rules, ["なし"], "やっぱ行かない", invited="控え室").input == PlayerInput.none()
    assert read(interpreter, rules, ["なし"], "ごめん、冗談だって。やっぱ行く").input == PlayerInput.none()
    assert goes_along("じゃあ行きます") and not goes_along("行くのかな？")


def test_going_back_goes_where_the_player_came_from(interpreter, rules):
    back = read(interpreter, rules, ["なし", "移動:控え室"], "そろそろ戻ろうかな", came_from="店内")
    assert back.input == SHOP and back.rule == "going_back"
    assert read(interpreter, rules, ["なし", "移動:控え室"], "そろそろ戻ろうかな").input == PlayerInput.none()
    assert read(interpreter, rules, ["なし", "移動:控え室"], "ママが戻ったら話そう",
                came_from="店内").input == PlayerInput.none()
    assert read(interpreter, rules, ["なし", "移動:控え室"], "いつ戻るの？", came_from="店内").input == PlayerInput.none()


def test_an_apology_is_not_a_goodbye():
    assert not farewell("失礼しました笑") and farewell("そろそろ失礼しました") and farewell("では、失礼します")
    assert cancelled("帰ろうかな…いや、もう少しいる") and not cancelled("帰ろうかな")


# ---------------------------------------------------------------- words in their sense

@pytest.mark.parametrize("text", ["ちょっとトイレ借りてもいい？", "傘借りてもいいかな", "スマホの充電器貸してくれない？"])
def test_borrowing_something_else_is_not_the_debt(interpreter, rules, text):
    assert read(interpreter, rules, ["なし"], text).input != PlayerInput.intent("二人の先の話")


@pytest.mark.parametrize("text", ["前に借りたお金のこと", "お金借りたままだったね", "借りたお金、返すよ"])
def test_borrowing_money_is(interpreter, rules, text):
    assert read(interpreter, rules, ["なし"], text).input == PlayerInput.intent("二人の先の話")


def test_the_object_of_a_verb():
    assert verb_argument("トイレ借りてもいい？", 3).surface == "トイレ"
    assert verb_argument("スマホの充電器貸して", 7).surface == "充電器"      # a noun with its suffix
    assert verb_argument("前に借りたお金", 2) is None


def test_hearing_is_not_music_and_upstairs_is_not_the_door(interpreter, rules):
    assert read(interpreter, rules, ["なし"], "いや聞いてないしｗ").input != PlayerInput.intent("音楽")
    assert read(interpreter, rules, ["なし"], "二階って何があるの？上がってみてもいい？").input not in (
        PlayerInput.intent("赤いドア"), MOVE)
    tokens = analyse("二階").tokens
    assert is_counted_quantity(tokens, 1)


def test_words_differing_only_in_a_number_are_not_near(rules):
    meaning = IntentMeaning.of(rules.scenario)
    assert not [m for m in meaning.matches("ママが一人でやってるの？") if m.intent == "意図:二人の先の話"]


def test_a_liking_keeps_its_thing_the_topic_and_a_one_kanji_noun_takes_tte(interpreter, rules):
    assert read(interpreter, rules, ["なし"], "ママは写真嫌いなの？").input == PlayerInput.intent("宣伝の写真")
    assert read(interpreter, rules, ["なし"], "曲ってどんなのかけてるの？").input == PlayerInput.intent("音楽")
    assert read(interpreter, rules, ["なし"], "ここのおつまみって何があるんですか").input == PlayerInput.intent("メニュー")


@pytest.mark.parametrize("text", ["えっ、本当ですか？じゃあ少しだけ", "ぜひぜひ！", "じゃあ、お言葉に甘えて", "お邪魔しまーす"])
def test_a_plain_yes_takes_up_an_open_invitation(interpreter, rules, text):
    taken = read(interpreter, rules, ["なし"], text, invited="控え室")
    assert taken.input == MOVE and taken.rule == "invitation"
    assert read(interpreter, rules, ["なし"], text).input != MOVE            # no invitation open: no move


@pytest.mark.parametrize("text", ["いえ、遠慮しておきます", "また今度にします", "ここでいいです"])
def test_a_polite_refusal_does_not_take_up_an_invitation(interpreter, rules, text):
    assert read(interpreter, rules, ["なし"], text, invited="控え室").input != MOVE
