"""The reading dictionary as SQLite: the same entries as pykakasi's own, read per character."""
import pickle
import sqlite3

import pytest

pytest.importorskip("pykakasi")

from chalicelib.interpret import readings  # noqa: E402


def test_every_entry_is_pykakasis_own(tmp_path):
    built = readings.SqliteTable(readings.build(tmp_path / "r.sqlite"))
    with open(readings._source(), "rb") as f:
        original = pickle.load(f)
    assert all(built.get(first) == words for first, words in original.items())
    assert built.get(ord("a")) is None and built.stamp() == readings._stamp(readings._source())


def test_the_converter_reads_the_table_and_readings_come_out_the_same(tmp_path, monkeypatch):
    from pykakasi.kanji import Kanwa

    from chalicelib.interpret import text
    monkeypatch.setenv("BUTAI_READINGS_FILE", str(tmp_path / "r.sqlite"))
    converter = readings.converter()          # builds the file: it is not there yet
    assert isinstance(Kanwa._shared_state["_jisyo_table"], readings.SqliteTable)
    assert "".join(s["hira"] for s in converter.convert("音楽を掛ける")) == "おんがくをかける"
    assert text.word_reading("写真") == "しゃしん"


def test_a_file_from_another_dictionary_is_made_again(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite"
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE entries (first INTEGER PRIMARY KEY, words BLOB NOT NULL)")
        db.execute("CREATE TABLE meta (stamp TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('0:0')")
    db.close()
    monkeypatch.setenv("BUTAI_READINGS_FILE", str(path))
    assert readings.table().stamp() == readings._stamp(readings._source())
