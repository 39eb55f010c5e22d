"""Money is read one way by every layer: a paying word taken back (denied or put off) asks for no bill, and what
is left of the line still does what it says."""
from __future__ import annotations

import pytest

from chalicelib.interpret.acts import ActRecogniser
from chalicelib.interpret.money import asks_to_pay, without_put_off


@pytest.mark.parametrize("text", ["お会計お願いします", "お勘定して", "お会計いいですか？", "いくら？", "おあいそで",
                                  "まだ帰らないけど、お会計だけ先に"])
def test_paying_words_ask_to_pay(text):
    assert asks_to_pay(text)


@pytest.mark.parametrize("text", ["お勘定ちゃうで、もう一杯", "会計じゃなくて、おかわり", "お会計はまだいいです",
                                  "支払いはあとで", "お代はいいよ。", "勘定は最後にまとめて"])
def test_a_paying_word_taken_back_asks_for_no_bill(text):
    assert not asks_to_pay(text)


def test_what_is_left_of_the_line_is_read():
    assert without_put_off("お勘定ちゃうで、もう一杯") == "で、もう一杯"
    found = ActRecogniser().recognise("お勘定ちゃうで、もう一杯")
    assert found.act == "注文" and not found.paying
    assert ActRecogniser().recognise("お会計お願いします").paying
