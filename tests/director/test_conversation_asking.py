"""What a player's line asks (chalicelib/conversation/asking.py): one reading of a question shared by facts,
focus, questions and the turn — blunt and casual questions without a question mark, a question restated."""
from __future__ import annotations

import pytest

from chalicelib.conversation import facts, focus
from chalicelib.conversation.asking import asks_without_mark, is_question
from chalicelib.conversation.questions import polarity


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
])
def test_a_statement_or_a_sigh_does_not_ask(text):
    assert not is_question(text)


def test_a_blunt_question_is_a_question_back_not_an_answer():
    assert asks_without_mark("なんでそれが好きなんだ")
    assert polarity("なんでそれが好きなんだ") is None          # 好き is no yes here: it asks back
    assert polarity("好きだよ") == "yes"
