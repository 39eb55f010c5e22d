"""A kanji word's reading is found in kana only where a word of the line starts (interpret/text.py)."""
from chalicelib.interpret.text import TextForms, make_matcher


def test_a_reading_inside_another_kana_word_is_no_hit():
    matcher = make_matcher()
    assert not matcher.hits(TextForms.of("こんなにあったかいお店でした"), ["高い"])
    assert matcher.hits(TextForms.of("ここ、たかいの？"), ["高い"])
    assert matcher.hits(TextForms.of("おんがくが好き"), ["音楽"])
