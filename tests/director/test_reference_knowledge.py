"""The reference scenario: what the characters obviously know is answered (the oden's ingredients, the lemon
in the highball, how long 葵 has helped, closing time, ママ's record hunting), a haggling line needs haggling,
and a thing taken out of a dish is never ordered."""
from __future__ import annotations

from tests.director.playing import visit


def test_the_owner_knows_her_oden_and_her_highball():
    _, oden = visit("こんばんは", "おでんって何があるの？")
    assert "牛すじ" in oden.answer.text and "わからない" not in oden.answer.text
    _, lemon = visit("ハイボールひとつ", "これ、レモン入ってる？")
    assert "レモン" in lemon.answer.text and "わからない" not in lemon.answer.text


def test_aoi_knows_how_long_she_has_helped_and_when_the_shop_closes():
    [years] = visit("働いて何年くらい？", to="神楽坂葵")
    assert "二年" in years.answer.text
    [closing] = visit("お店って何時に閉まるの？", to="神楽坂葵")
    assert "二時" in closing.answer.text


def test_the_record_hunt_and_the_first_song_are_hers_to_tell():
    [hunt] = visit("ママ、レコード探しが好きなんだって？")
    assert "レコード屋" in hunt.answer.text and "守備範囲外" not in hunt.answer.text
    [find] = visit("ママの一番の掘り出し物って？")
    assert "喝采" in find.answer.text
    [first] = visit("じゃあ最初の一曲は何にする？")
    assert "喝采" in first.answer.text and "声が出ない" not in first.answer.text


def test_no_haggling_line_without_haggling():
    [praise] = visit("ママ、その着物きれいだね")
    assert "まけない" not in praise.answer.text
    [haggle] = visit("ちょっと安くしてよ")
    assert "まけない" in haggle.answer.text


def test_a_thing_taken_out_of_the_napolitan_is_not_ordered():
    _, without = visit("ナポリタンください", "玉ねぎ抜いてもらえる？")
    assert without.kind == "order" and "玉ねぎ抜き" in without.answer.text and "置いてない" not in without.answer.text


def test_having_to_leave_soon_is_answered_and_does_not_end_the_visit():
    _, hint, bye = visit("ビールください", "明日早いし、そろそろ帰らなあかんわ", "ほな、帰るね")
    assert not hint.step.state.ended and "帰る" in hint.answer.text
    assert bye.step.state.ended
