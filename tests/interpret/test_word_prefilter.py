"""A word's pattern is tried only on a text holding the characters every form of the word holds
(text._held_by_every_form): a cheap test that must never skip a text the pattern finds the word in."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chalicelib.interpret.spelling import scenario_words
from chalicelib.interpret.text import TextForms, _CompiledWord, _held_by_every_form, make_matcher, nfkc, word_variants
from chalicelib.scenario import load_scenario_text

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("chinoike", "hanaya")


def _player_lines() -> list[str]:
    lines: list[str] = []
    for name in ("dialogues.json", "dialogues-variants.json", "hanaya-dialogues.json", "hanaya-variants.json"):
        data = json.loads((ROOT / "scenarios" / "eval" / name).read_text(encoding="utf-8"))
        lines += [turn["say"] for dialogue in data["dialogues"] for turn in dialogue["turns"] if "say" in turn]
    return lines


def _words(name: str) -> list[str]:
    scenario = load_scenario_text((ROOT / "scenarios" / f"{name}.json").read_text(encoding="utf-8"), source=name)
    return sorted({w for w in scenario_words(scenario) if w.strip()})


@pytest.mark.parametrize("word, forms", [
    ("入り口", ["入口", "入り口"]),
    ("変える", ["変えない", "変え", "変えて"]),
    ("流して", ["流さ", "流す"]),
    ("高い", ["高かった", "高く"]),
    ("飲み", ["飲む", "飲んだ"]),
])
def test_every_form_holds_the_characters(word, forms):
    held = _held_by_every_form(nfkc(word))
    for form in forms:
        assert all(c in form for c in held), (word, form, held)


@pytest.mark.parametrize("name", SCENARIOS)
def test_no_word_found_in_a_text_the_test_skips(name):
    """Every listed word of a scenario against every player line of the dialogue sets: where the word's
    patterns (as written, or its reading) find it, the cheap test lets the text through."""
    texts = [TextForms.of(line) for line in _player_lines()]
    checked = 0
    for word in _words(name):
        compiled = _CompiledWord(word, True, True)
        patterns = [(re.compile(compiled.source), compiled.required, compiled.cross_script)]
        if compiled.reading_source:
            patterns.append((re.compile(compiled.reading_source), compiled.reading_required, True))
        for pattern, required, folded in patterns:
            for forms in texts:
                text = forms.folded if folded else forms.nfkc
                if pattern.search(text):
                    checked += 1
                    assert all(c in text for c in required), (word, text, required)
    assert checked > 500


def test_the_matcher_finds_what_the_patterns_find():
    """The matcher with the test finds the same words as the patterns alone (one scenario's words over 300
    of the sets' lines)."""
    matcher = make_matcher()
    words = _words("chinoike")
    compiled = [(w, c, re.compile(c.source)) for w in words for c in [_CompiledWord(w, True, True)]]
    for line in _player_lines()[::10][:300]:
        forms = TextForms.of(line)
        found = {hit.word for hit in matcher.hits(forms, words)}
        for word, c, pattern in compiled:
            if pattern.search(forms.folded if c.cross_script else forms.nfkc):
                assert word in found, (word, line)


def test_word_variants_all_start_with_the_word():
    for word in ("入り口", "変える", "流して", "高い"):
        assert all(alt.startswith(word[0]) for alt in word_variants(word))
