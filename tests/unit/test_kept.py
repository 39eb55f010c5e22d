"""Results of pure functions of a scenario's texts, kept beside the scenario (chalicelib/kept.py) and read by
a new instance instead of derived (ScenarioLibrary)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from butai_tools.scenario.stage_play import _Bucket
from chalicelib import kept
from chalicelib.director import KEPT_PREFIX, ScenarioLibrary
from chalicelib.interpret.ja import sudachi

ROOT = Path(__file__).resolve().parents[2]
calls: list[str] = []


@kept.table("tests.doubled", encode=list, decode=tuple)
def doubled(text: str) -> tuple[str, str]:
    calls.append(text)
    return (text, text)


@pytest.fixture(autouse=True)
def _fresh():
    calls.clear()
    doubled.cache_clear()
    yield
    doubled.cache_clear()


def test_a_table_caches_and_records_what_it_derives():
    with kept.recording() as got:
        assert doubled("a") == ("a", "a")
        assert doubled("a") == ("a", "a")
    assert calls == ["a"]
    assert got == {"tests.doubled": {"a": ["a", "a"]}}
    doubled("b")                              # outside the block: not recorded
    assert "b" not in got["tests.doubled"]


def test_primed_results_are_read_not_derived():
    assert kept.prime({"format": kept.FORMAT, "fingerprint": kept.fingerprint(),
                       "tables": {"tests.doubled": {"x": ["y", "z"]}}})
    assert doubled("x") == ("y", "z")       # decoded as the table declares
    assert calls == []
    with kept.recording() as got:            # what is read is recorded too (kept again as it was)
        doubled("x")
    assert got == {"tests.doubled": {"x": ["y", "z"]}}


@pytest.mark.parametrize("document", [
    None, [], {"format": kept.FORMAT + 1, "fingerprint": "?", "tables": {}},
    {"format": kept.FORMAT, "fingerprint": "0" * 16, "tables": {"tests.doubled": {"x": ["y", "z"]}}},
    {"format": kept.FORMAT, "fingerprint": None, "tables": {"no.such.table": {}}},
    {"format": kept.FORMAT, "fingerprint": None, "tables": {"tests.doubled": ["x"]}},
])
def test_results_of_other_code_or_another_shape_are_refused(document):
    if isinstance(document, dict) and document["fingerprint"] is None:
        document = {**document, "fingerprint": kept.fingerprint()}
    assert not kept.prime(document)
    assert doubled("x") == ("x", "x")


def test_the_fingerprint_follows_the_analyser(monkeypatch):
    kept.fingerprint.cache_clear()
    before = kept.fingerprint()
    assert len(before) == 16 and int(before, 16) >= 0
    kept.fingerprint.cache_clear()
    monkeypatch.setattr(kept, "_analyser_identity", lambda: b"another dictionary")
    try:
        assert kept.fingerprint() != before
    finally:
        kept.fingerprint.cache_clear()
    monkeypatch.undo()
    assert kept.fingerprint() == before


def test_a_declared_name_is_one_table():
    with pytest.raises(ValueError):
        kept.table("tests.doubled")(lambda text: text)


def _parts(loaded):
    parts = loaded.conversation
    facts = {ref: [(s.text, sorted(s.keys), sorted(s.nouns), sorted(s.counters)) for s in found]
             for ref, found in parts.facts._by_ref.items()}
    return facts, parts.respeller._loose_by_reading


def test_a_new_instance_reads_what_the_first_one_kept():
    bucket = _Bucket()
    path = ROOT / "scenarios" / "chinoike.json"
    key = ScenarioLibrary(bucket, "assets").put(path)

    kept.forget()
    first = ScenarioLibrary(bucket, "assets").get(key)
    assert not first.from_cache
    kept_key = ScenarioLibrary.kept_key(key)
    assert kept_key.startswith(KEPT_PREFIX) and kept_key in bucket.objects
    document = json.loads(bucket.objects[kept_key])
    assert document["fingerprint"] == kept.fingerprint()
    assert {"facts.sentence_keys", "spelling.reading", "spelling.kanji_nouns", "text.word_reading",
            "text.variant_source"} <= set(document["tables"])

    kept.forget()                            # a new process: nothing derived, nothing primed
    sudachi.analyse.cache_clear()
    second = ScenarioLibrary(bucket, "assets").get(key)
    assert second.from_cache
    assert sudachi.analyse.cache_info().currsize < 300     # against some 2,500 analyses when derived
    assert _parts(second) == _parts(first)
    # and the game plays the same
    text = "ママ、このお店って何年やってるの？"
    state = first.rules.new_state()
    one, other = (loaded.interpreter.interpret_turn(text, state) for loaded in (first, second))
    assert (one.input, one.addressee) == (other.input, other.addressee)


def test_an_unreadable_kept_object_is_derived_again_and_replaced():
    bucket = _Bucket()
    key = ScenarioLibrary(bucket, "assets").put(ROOT / "scenarios" / "hanaya.json")
    bucket.objects[ScenarioLibrary.kept_key(key)] = b"{not json"
    kept.forget()
    loaded = ScenarioLibrary(bucket, "assets").get(key)
    assert not loaded.from_cache
    assert json.loads(bucket.objects[ScenarioLibrary.kept_key(key)])["fingerprint"] == kept.fingerprint()


def test_a_bucket_that_refuses_the_write_costs_nothing_but_the_keeping(caplog):
    class ReadOnly(_Bucket):
        def put_object(self, *, Key, **kwargs):
            if Key.startswith(KEPT_PREFIX):
                raise PermissionError("AccessDenied")
            return super().put_object(Key=Key, **kwargs)

    bucket = ReadOnly()
    key = ScenarioLibrary(bucket, "assets").put(ROOT / "scenarios" / "hanaya.json")
    loaded = ScenarioLibrary(bucket, "assets").get(key)
    assert loaded.conversation is not None
    assert "could not keep" in caplog.text
