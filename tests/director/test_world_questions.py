"""Questions a curious stranger asks at the counter about the characters' world (their past, family, plans,
the shop and the town) are answered from the reference scenario's knowledge, by the one asked, in their own
words; and an entry is reached by its head, not by a word it shares with someone else's question."""
from __future__ import annotations

import pytest

from tests.director.playing import said, visit

AOI = "神楽坂葵"
MAMA = "赤尾妙子"
BRUSH_OFF = ("fallback",)


def asked(text: str, to: str | None = None):
    return visit("こんばんは", text, to=to)[-1]


@pytest.mark.parametrize("text,to,expected", [
    ("先代さんってどういう方だったんですか", None, ("着物", "きっぷ")),
    ("先代は亡くなったの？", None, ("九十", "別府")),
    ("ママはどうやって先代と知り合ったの？", None, ("銀座",)),
    ("この写真、誰が撮ったんですか？", None, ("常連",)),
    ("アルバムとかある？", None, ("アルバム",)),
    ("ママ、お子さんはいるんですか？", None, ("子どもはいない",)),
    ("今って何月だっけ", None, ("十一月",)),
    ("チャージっていくら？", None, ("飲んだ分",)),
    ("引退とか考えないの？", None, ("足腰",)),
    ("何席あるの？", None, ("八席",)),
    ("このお店、誰が始めたの？", None, ("先代",)),
    ("ここ禁煙？", None, ("換気扇",)),
    ("有名人とか来る？", None, ("ただのお客さん",)),
    ("バイト楽しい？", AOI, ("客席",)),
    ("インスタのアカウント教えて", AOI, ("インスタ",)),
    ("その映画館ってどこにあるの？", AOI, ("銀星座",)),
    ("ホラー映画とか観る？", AOI, ("ホラーは無理",)),
    ("学校はどこ行ってたの？", AOI, ("大学",)),
    ("ママと喧嘩する？", AOI, ("言い合い",)),
    ("前のママに会ったことある？", AOI, ("プリン",)),
])
def test_a_question_about_the_characters_world_is_answered(text, to, expected):
    played = asked(text, to)
    assert played.answer is not None and played.answer.source not in BRUSH_OFF, said(played)
    assert any(word in said(played) for word in expected), said(played)
    if to is not None:
        assert played.answer.speaker == to


def test_the_season_is_one_cold_november_night():
    # 今夜は冷える (ママ) and 真夏のおでん (葵) agree: it is November; a guest who feels hot is not told it is cold
    hot = asked("今日は外が暑かった")
    assert "冷える" not in said(hot) and "冷たい雨" in said(hot)
    assert "十一月" in said(asked("今の季節は何がおいしい？"))
    assert "十一月" in said(asked("夏は好き？", AOI))


@pytest.mark.parametrize("text,to,expected,not_expected", [
    # どんな人 of 常連 is the regulars' entry, not 先代's
    ("常連さんってどんな人？", None, "旦那衆", "着物"),
    # asking leave to smoke is ママ's ashtray, not 葵's own habit
    ("タバコ吸っていい？", None, "灰皿", "苦手"),
    # paying is the bill, not a talk about prices
    ("お会計お願い", None, "お勘定", "チャージ"),
    # 「このお店のどこが好き？」 to 葵 is about the shop, not about why she likes films
    ("このお店のどこが好き？", AOI, "おかえり", "テレビ"),
    # 夏 of 夏休み is not the season asked about
    ("夏休みどっか行った？", AOI, "", "十一月"),
    # where the guest lost a wallet is not the cinema 葵 works at
    ("映画館の前で財布なくしたんだっけ", AOI, "財布", "銀星座"),
])
def test_a_new_entry_does_not_take_a_question_that_shares_a_word(text, to, expected, not_expected):
    words = said(asked(text, to))
    assert expected in words and not_expected not in words, words


def test_a_follow_up_about_the_same_person_reaches_the_next_fact():
    first, second = visit("こんばんは", "師匠さんって、どんな人柄だったの？", "まだお元気なの？")[1:]
    assert "着物" in said(first)
    assert "九十" in said(second)
