"""Normalisation and variant-aware word matching."""
from __future__ import annotations

import pytest

from chalicelib.interpret.text import (
    PlainMatcher,
    TextForms,
    WordMatcher,
    fold,
    lcs_length,
    nfkc,
    readings_available,
    strip_punctuation,
    word_variants,
)

MUSIC = ["音楽", "曲", "歌", "BGM", "カラオケ", "レコード", "流す", "流して", "かける", "サントラ"]


def test_nfkc_and_fold_keep_positions():
    text = "ｶﾗｵｹとＢＧＭ、ナポリタン"
    assert nfkc(text) == "カラオケとbgm、ナポリタン"
    assert fold(text) == "からおけとbgm、なぽりたん"
    forms = TextForms.of(text)
    assert len(forms.nfkc) == len(forms.folded)


@pytest.mark.parametrize("text, words", [
    ("流したら？", ["流す"]),                 # conjugation (the spec's example)
    ("ジャズでも流そうよ", ["流す"]),
    ("何か掛けようか", ["かける"]) if readings_available() else ("曲をかけよう", ["かける"]),
    ("レコードかけて", ["かける"]),
    ("一杯飲もうかな", ["飲み"]),               # a listed masu-stem stands for the verb
    ("来月には返せると思う", ["返す"]),
    ("ＢＧＭうるさくない？", ["BGM"]),          # full width
    ("ｲﾝｽﾀやってる？", ["インスタ"]),            # half-width katakana
    ("からおけ行きたい", ["カラオケ"]),          # kana script
    ("入り口が暗い", ["入口"]),                  # okurigana between kanji
    ("入口が暗い", ["入り口"]),
    ("赤かった", ["赤い"]),                     # adjective
])
def test_variants_match(text, words):
    assert WordMatcher().allows(text, words)


@pytest.mark.skipif(not readings_available(), reason="pykakasi not installed")
@pytest.mark.parametrize("text, words", [
    ("おんがくのセンスいいね", ["音楽"]),
    ("とびらが重い", ["扉"]),
    ("しゃしん撮ろう", ["写真"]),
    ("ながしたらいいのに", ["流す"]),
    ("曲を掛けてよ", ["かける"]),
    ("先代さんとあってるの？", ["会ってる"]),      # read as 会う there, it is still found
])
def test_kana_kanji_readings(text, words):
    assert WordMatcher().allows(text, words)
    assert not PlainMatcher().allows(text, words)


@pytest.mark.parametrize("text, words", [
    ("メニューなどありますか", ["ドア"]),   # two-kana katakana words are not matched in hiragana
    ("極端だね", ["曲"]),                   # a reading inside another kanji word
    ("控え室に行こう", ["返す"]),           # かえし inside ひかえしつ
    ("明るい感じ", ["赤"]),                 # short readings are never used
    ("今日はいい天気", MUSIC),
    ("うちの近くにも温泉あってよ", ["会ってる"]),   # the analyser reads あって as ある, not 会う
    ("駅前にあってね", ["会ってる"]),
])
def test_variants_do_not_overreach(text, words):
    assert not WordMatcher().allows(text, words)


def test_plain_matcher_is_raw_substring():
    plain = PlainMatcher()
    assert plain.allows("流してる", ["流して"])
    assert not plain.allows("流したら", ["流す", "流して"])
    assert not plain.allows("ＢＧＭ", ["BGM"])
    assert plain.allows("何でも", [])


def test_hits_carry_positions_and_exactness():
    forms = TextForms.of("昔の曲を流したら")
    hits = {(h.word, h.exact) for h in WordMatcher().hits(forms, MUSIC)}
    assert ("曲", True) in hits
    assert ("流す", False) in hits


def test_word_variants_of_godan_and_ichidan():
    assert any("[さしすせそ]" in v for v in word_variants("流す"))
    assert "かけ" in word_variants("かける")


def test_lcs_and_punctuation():
    assert lcs_length("流す曲を変えてみたら", "流す曲を変えたら") == 8
    assert lcs_length("", "abc") == 0
    assert strip_punctuation("流す曲を、変えてみたら？！") == "流す曲を変えてみたら"


def test_a_kana_words_reading_inside_a_longer_noun_is_not_that_word():
    # the かけ of 掛け持ち is no かける; a verb's own forms (掛けよう, 掛けて) still are
    matcher = WordMatcher()
    assert not matcher.hits(TextForms.of("仕事を掛け持ちしてて"), ["かける"])
    if readings_available():
        assert matcher.hits(TextForms.of("何か掛けようか"), ["かける"])
