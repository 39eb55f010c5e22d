"""What a player's line asks (chalicelib/interpret/asking.py): one reading of a question shared by facts,
focus, questions and the turn — blunt and casual questions without a question mark, a question restated."""
from __future__ import annotations

import pytest

from chalicelib.conversation import facts, focus
from chalicelib.conversation.questions import polarity
from chalicelib.interpret.asking import asks_without_mark, is_question, wonders


@pytest.mark.parametrize("text", [
    "で、どこで修行したんだ", "その帽子、誰にもらったんだよ", "いつから働いてんだ", "今日のおすすめは何だ",
    "それ、なんだ", "何読んでんだ、さっきから", "どの辺に住んでるんだい", "いくらだ", "どっちが上手いんだ",
    "ここ、何時までやってんの", "それを聞いてるんだよ", "だから歳って言ってんだ", "好きなの", "本当ですか！",
])
def test_a_blunt_or_casual_question_asks(text):
    assert is_question(text)
    assert facts.is_question(text) and focus.is_question(text)      # one reading, everywhere


@pytest.mark.parametrize("text", [
    "そうなんだ", "暇なんだ", "何でもいいんだ", "何かいいことあったんだ", "誰かいるんだ", "いつも来てるんだ",
    "どうせ暇なんだ", "なんだ、そういうことか。ならいいや", "そうか。焼酎ください", "好きかな", "昔は歌手になりたかったんだ",
    "そっか", "そうか", "あ、そうですか", "へえ、そうか。",
])
def test_a_statement_or_a_sigh_does_not_ask(text):
    assert not is_question(text)


def test_a_back_channel_with_a_question_mark_asks():
    assert is_question("そっか？") and is_question("そうですか？") and is_question("そっか。で、名前は？")


def test_wondering_aloud_and_asking_leave():
    assert wonders("明日雨降るかな") == "wonder" and wonders("ママは来るかしら。") == "wonder"
    assert wonders("毎日ここに来てもいいかな") == "leave" and wonders("座っても良いかしら") == "leave"
    assert wonders("そうかな") is None and wonders("雨だね") is None and wonders("何時に来るかな") == "wonder"
    acts = ActRecogniser()
    assert acts.recognise("明日雨降るかな").act == "質問" and acts.recognise("終電って何時だっけ").act == "質問"
    assert acts.recognise("そっか").act != "質問"


def test_musing_on_ones_own_plan_asks_nothing_and_is_the_players_own():
    from chalicelib.interpret.belonging import read_own
    for text in ("弟にLINEだけでも送ってみようかな", "明日、久しぶりに実家に電話してみようかな", "今度ロゴ描いてみようかなあ"):
        assert wonders(text) is None, text
        assert ActRecogniser().recognise(text).act not in ("質問", "挨拶"), text
        assert read_own(text).told, text
    assert wonders("どうしようかな") == "wonder"          # what to do is asked
    assert not read_own("明日雨降るかな").told


def test_a_blunt_question_is_a_question_back_not_an_answer():
    assert asks_without_mark("なんでそれが好きなんだ")
    assert polarity("なんでそれが好きなんだ") is None          # 好き is no yes here: it asks back
    assert polarity("好きだよ") == "yes"


# ---------------------------------------------------------------- on the reference scenario

from pathlib import Path  # noqa: E402

from chalicelib.interpret.acts import ActRecogniser  # noqa: E402
from tests.director.playing import visit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
_ECHO_LEADS = ("へえ、そうなんだ", "もっと聞かせて", "もっと聞きたい", "詳しくない", "詳しいわよ")


def test_a_blunt_question_is_answered_not_echoed():
    *_, asked = visit("こんばんは", "ママの一番好きな歌は何だ")
    assert asked.kind != "echo" and ("喝采" in asked.answer.text or "ちあきなおみ" in asked.answer.text)


@pytest.mark.parametrize("text", ["おふくろが去年亡くなってな", "実は先月、女房に先立たれたんだ", "親父が入院しててさ"])
def test_sad_news_of_the_players_life_is_its_own_act(text):
    assert ActRecogniser().recognise(text).act == "悲報"


def test_a_question_about_a_death_is_no_sad_news():
    assert ActRecogniser().recognise("先代は亡くなったのか？").act != "悲報"


def test_sad_news_gets_sympathy_not_an_echo_or_a_cheer():
    *_, told = visit("こんばんは", "息子が去年、病気で死んだんだ", to="神楽坂葵")
    assert told.answer.act == "悲報" and told.answer.expression == "troubled"
    assert not any(lead in told.answer.text for lead in _ECHO_LEADS) and "だよね" not in told.answer.text


def test_the_players_own_past_is_taken_up_not_echoed_as_unknown():
    *_, told = visit("こんばんは", "俺も若い頃は船に乗っててな")
    assert told.kind == "reaction" and told.answer.act == "身の上"


def test_a_filler_noun_is_never_echoed():
    *_, said = visit("こんばんは", "まあ、そんなもんか")
    assert said.kind != "echo"


def test_a_question_about_someone_else_here_is_not_answered_about_the_one_asked():
    *_, asked = visit("こんばんは", "葵ちゃん、ママって結婚してないのか？", to="神楽坂葵")
    assert asked.answer.speaker == "赤尾妙子" or "ママ" in asked.answer.text
    assert not asked.answer.text.startswith("私？")
    # someone named only in a sentence before the question is not whom it asks about
    *_, tapped = visit("こんばんは", "じゃあママで。そちらの方は？", to="神楽坂葵")
    assert tapped.answer.speaker == "神楽坂葵" and "about_other" not in tapped.context


def test_a_bare_you_asks_the_one_spoken_to():
    *_, asked = visit("こんばんは", "あんたの名前", to="神楽坂葵")
    assert "神楽坂葵" in asked.answer.text


def test_the_back_of_the_shop_is_the_owners_to_tell():
    *_, asked = visit("こんばんは", "ママ、その奥には何があるんだい")
    assert "控え室" in asked.answer.text
