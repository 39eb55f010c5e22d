"""The analyser seam (SudachiPy, small dictionary) and the word-meaning table."""
from __future__ import annotations

import json
import struct
from array import array

import pytest

from chalicelib.interpret.ja import WordMeaning, analyse, available, word_meaning
from chalicelib.interpret.ja.meaning import MAGIC, MeaningIndex, word_key

pytestmark = pytest.mark.skipif(not available(), reason="SudachiPy or its dictionary is not installed")


def test_tokens_carry_surface_lemma_normalised_form_reading_pos_conjugation_and_offsets():
    tokens = analyse("入口のドア、おんがく流そう").tokens
    first = tokens[0]
    assert (first.surface, first.normalised, first.reading, first.start, first.end) == ("入口", "入り口", "イリグチ", 0, 2)
    assert first.pos[0] == "名詞" and first.is_content
    assert [t.normalised for t in tokens if t.surface == "おんがく"] == ["音楽"]
    verb = analyse("飲もうかな").tokens[0]
    assert (verb.surface, verb.lemma, verb.conjugation) == ("飲もう", "飲む", "意志推量形")


def test_width_is_normalised_and_offsets_index_the_input():
    text = "ＢＧＭの音量"
    token = analyse(text).tokens[0]
    assert token.normalised == "BGM" and text[token.start:token.end] == "ＢＧＭ"


def test_grammar_verbs_and_numbers_are_not_content():
    content = [t.surface for t in analyse("ジンジャーエールある？").content()]
    assert "ある" not in content and "ジンジャー" in content


def _tiny_table(words: dict[str, int], neighbours: dict[int, list[tuple[int, float]]], rows: int) -> bytes:
    keys = sorted((word_key(w), r) for w, r in words.items())
    offsets, near, sims = array("I", [0]), array("H"), array("B")
    for row in range(rows):
        for other, cosine in neighbours.get(row, []):
            near.append(other)
            sims.append(round(cosine * 255))
        offsets.append(len(near))
    header = json.dumps({"rows": rows, "words": len(keys), "scale": 255}).encode()
    return b"".join([MAGIC, struct.pack("<I", len(header)), header, array("Q", [k for k, _ in keys]).tobytes(),
                     array("H", [r for _, r in keys]).tobytes(), offsets.tobytes(), near.tobytes(), sims.tobytes()])


def test_table_format_round_trip_and_index(tmp_path):
    blob = _tiny_table({"酒": 0, "ビール": 1, "猫": 2, "地ビール": 1}, {0: [(1, 0.6)], 1: [(0, 0.6)]}, 3)
    path = tmp_path / "t.bin"
    path.write_bytes(blob)
    table = word_meaning(path)
    assert table.row("ビール") == 1 and table.row("犬") is None
    assert table.cosine("ビール", "酒") == pytest.approx(0.6, abs=0.01)
    assert table.cosine("猫", "酒") == 0.0
    assert table.cosine("地ビール", "ビール") < 1.0          # same row, not the same word
    index = MeaningIndex(table, {"意図:メニュー": ["酒"], "意図:猫": ["猫"]})
    token = analyse("ビール").tokens[0]
    related = index.token_related(token)
    assert set(related) == {"意図:メニュー"} and related["意図:メニュー"].anchor == "酒"
    with pytest.raises(ValueError):
        WordMeaning(b"not a table")


def test_packaged_table_relates_world_knowledge():
    table = word_meaning()
    assert table is not None and table.header["rows"] == 20000
    assert table.cosine("ハイボール", "酒") >= 0.5
    assert table.cosine("ジンジャーエール", "味") >= 0.4
    assert table.cosine("ハイボール", "扉") == 0.0
