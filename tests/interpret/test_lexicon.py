"""Every word class of the lexicon (chalicelib/interpret/lexicon/*.json) runs its own examples through the
matcher the engine uses: a word added or taken out is checked where it works."""
from __future__ import annotations

import json

import pytest

from chalicelib.conversation.focus import question_topic
from chalicelib.conversation.forms import read_form
from chalicelib.conversation.turn import not_echoed
from chalicelib.interpret.addressee import calls_at_head
from chalicelib.interpret.asking import is_question
from chalicelib.interpret.belonging import kin_of_player, read_own
from chalicelib.interpret.cues import farewell, leave_cue
from chalicelib.interpret.lexicon import class_names, patterns, table_names, word_class
from chalicelib.interpret.phrases import SaidPhrases
from chalicelib.interpret.spelling import Respeller, neutral

# How the engine reads each class: the function it calls on a text.
MATCHERS = {
    "honorifics": lambda text: word_class("honorifics").at_start(text) is not None,
    # set aside before a line is read (spelling.py): the line changes
    "fillers": lambda text: neutral(text).text != text,
    "discourse_markers": lambda text: neutral(text).text != text,
    "laughter": lambda text: neutral(text).text != text,
    "asking_leave_tails": lambda text: neutral(text).text != text,
    "restating_tails": lambda text: neutral(text).text != text,
    # what may stand before a name that calls at a sentence's head (interpret/addressee.py)
    "call_leads": lambda text: any(calls_at_head(text, name) for name in ("ママ", "葵ちゃん", "葵さん")),
    # a kana spelling read as the word
    "spellings": lambda text: Respeller().respell(text) != text,
    # a scenario's phrase still said with the verb carried on (外に出る in 外に出てみます)
    "carrying_verbs": lambda text: SaidPhrases(["外に出る"]).said(text),
    # told of the player's own life: their kin, what they own, themselves as the subject (belonging.py)
    "first_person": lambda text: bool(read_own(text).spans),
    "humble_kin": lambda text: bool(kin_of_player(text)),
    # a noun never taken up as what the player talked about, as written or normalised (conversation/turn.py)
    "not_echoed": lambda text: not_echoed(text),
    # what before 帰る takes a thing home: no goodbye, nothing that supports leaving (interpret/cues.py)
    "taken_home": lambda text: not farewell(text) and not leave_cue(text),
    # no thing kept here: the have form is not read (conversation/forms.py)
    "not_kept": lambda text: (found := read_form(text)) is None or found.form != "have",
    # the noun phrase a question sets up as its topic (conversation/focus.py)
    "topic_markers": lambda text: is_question(text) and question_topic(text) is not None,
}


def test_every_class_has_a_matcher_and_examples():
    for name in class_names():
        assert name in MATCHERS, f"lexicon class {name} has no matcher in this test"
        wc = word_class(name)
        assert wc.entries and wc.positive and wc.negative, name
        assert wc.name == name


@pytest.mark.parametrize("name", class_names())
def test_positive_examples_match(name):
    missed = [t for t in word_class(name).positive if not MATCHERS[name](t)]
    assert not missed, f"{name}: {missed}"


@pytest.mark.parametrize("name", class_names())
def test_negative_examples_do_not_match(name):
    wrongly = [t for t in word_class(name).negative if MATCHERS[name](t)]
    assert not wrongly, f"{name}: {wrongly}"


def _table_patterns():
    return [(t, n) for t in table_names() for n in patterns(t)]


@pytest.mark.parametrize("table,name", _table_patterns())
def test_every_pattern_finds_its_positive_examples_and_not_its_negative(table, name):
    import re
    p = patterns(table)[name]
    rx = re.compile(p.source)
    assert p.positive, f"{table}.{name} has no positive example"
    missed = [t for t in p.positive if not rx.search(t)]
    wrongly = [t for t in p.negative if rx.search(t)]
    assert not missed and not wrongly, f"{table}.{name}: missed {missed}, wrongly {wrongly}"


def test_every_mapping_says_what_it_reads_and_is_read_by_mapping():
    from pathlib import Path

    import chalicelib.interpret.lexicon as lexicon
    from chalicelib.interpret.lexicon import _data, mapping
    for path in sorted(Path(lexicon.__file__).parent.glob("*.json")):
        for key, entry in _data(path.stem).items():
            if isinstance(entry, dict) and "map" in entry:
                assert entry.get("note") and entry["map"], f"{path.stem}.{key}"
                assert mapping(path.stem, key) == entry["map"]


def test_a_pattern_uses_its_siblings_and_refuses_a_loop(tmp_path, monkeypatch):
    import chalicelib.interpret.lexicon as lexicon
    (tmp_path / "t.json").write_text(json.dumps({"class": "t", "patterns": {
        "stem": {"regex": "行(?=[かき])", "positive": ["行かない"]},
        "go": {"regex": "<<stem>>|戻", "positive": ["戻る"]}}}), encoding="utf-8")
    (tmp_path / "loop.json").write_text(json.dumps({"class": "loop", "patterns": {"a": "<<b>>", "b": "<<a>>"}}),
                                        encoding="utf-8")
    monkeypatch.setattr(lexicon, "_HERE", tmp_path)
    _forget(lexicon)
    try:
        assert lexicon.pattern("t", "go") == "(?:行(?=[かき]))|戻"
        assert lexicon.table_names() == ["loop", "t"] and lexicon.class_names() == []
        with pytest.raises(ValueError):
            lexicon.pattern("loop", "a")
    finally:
        _forget(lexicon)


def _forget(lexicon):
    lexicon._data.cache_clear()
    lexicon.patterns.cache_clear()
    lexicon.compiled.cache_clear()
