"""Kansai and casual forms read as the standard ones (chalicelib/interpret/dialect.py), and a must-leave-soon
line is no goodbye (chalicelib/interpret/cues.farewell)."""
from __future__ import annotations

import pytest

from chalicelib.interpret.cues import farewell
from chalicelib.interpret.dialect import standard


@pytest.mark.parametrize(("said", "meant"), [
    ("終電あるし、もう帰らなあかんねん", "帰らなきゃ"),
    ("ぼちぼち行かんと", "行かないと"),
    ("それ、なんでやねん！", "なんでだよ"),
    ("ほんまに？", "本当に"),
    ("せやな、たしかに", "そうだね"),
    ("そんなん知らへんよ", "知らない"),
    ("それはあかんやろ", "だめ"),
])
def test_a_kansai_form_reads_as_the_standard_one(said, meant):
    assert meant in standard(said)


@pytest.mark.parametrize("text", ["お姉さんと、", "なんと！", "たんと食べて"])
def test_a_standard_word_is_left_alone(text):
    assert standard(text) == text


@pytest.mark.parametrize("text", ["そろそろ帰らなあかんわ", "明日早いから帰らんと", "もう行かなきゃ", "そろそろ帰らないと"])
def test_having_to_leave_soon_is_no_goodbye(text):
    assert not farewell(standard(text))


@pytest.mark.parametrize("text", ["そろそろ帰るね", "ごちそうさま、帰ります", "ほな、おやすみ〜"])
def test_a_goodbye_still_is_one(text):
    assert farewell(standard(text))


def _examples():
    from chalicelib.interpret.lexicon import rewrites
    return [pytest.param(said, reads, id=said) for rule in rewrites("dialect") for said, reads in rule.examples]


def _kept():
    from chalicelib.interpret.lexicon import rewrites
    return [pytest.param(text, id=text) for rule in rewrites("dialect") for text in rule.kept]


@pytest.mark.parametrize(("said", "reads"), _examples())
def test_every_example_of_the_dialect_table_reads_as_it_says(said, reads):
    assert standard(said) == reads


@pytest.mark.parametrize("text", _kept())
def test_every_text_the_dialect_table_keeps_is_left_alone(text):
    assert standard(text) == text
