"""The reading dictionary (kanji → kana) behind ``text.reading_of``.

pykakasi reads its whole dictionary (a 10 MB pickle, 270,000 entries) into
memory when its first converter is made: 0.7 s on a quiet core, paid by every
new process — on Lambda, by the first turn of every new instance.  Its lookups
only ever ask for the entries of one first character, so the same dictionary
is kept here as an SQLite file keyed by that character: opening it takes about
a millisecond and each character's entries are one indexed read, done once.

The file is made from pykakasi's own dictionary (``build``): by
infra/package.sh into the Lambda package, and elsewhere on first use into the
user's cache folder.  Where neither can be had, pykakasi loads its dictionary
as it always did.  ``converter()`` is the one place that knows which analyser
gives readings; swapping it (for another dictionary or analyser) changes only
this module.
"""
from __future__ import annotations

import marshal
import os
import sqlite3
import tempfile
import threading
from pathlib import Path

PACKAGED = Path(__file__).with_name("readings.sqlite")
_FORMAT = 1


def _source() -> Path:
    import pykakasi.properties
    return Path(pykakasi.properties.Configurations.dictpath(pykakasi.properties.Configurations.jisyo_kanwa))


def _stamp(source: Path) -> str:
    # The dictionary's size identifies the pykakasi release it came with (pinned in requirements.txt).
    return f"{_FORMAT}:{source.stat().st_size}"


def build(target: Path) -> Path:
    """Writes pykakasi's dictionary to ``target`` as an SQLite table keyed by first character."""
    import pickle
    source = _source()
    with open(source, "rb") as f:
        table = pickle.load(f)  # pykakasi's own file, read as pykakasi itself reads it
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(fd)
    try:
        db = sqlite3.connect(tmp)
        with db:
            db.execute("CREATE TABLE entries (first INTEGER PRIMARY KEY, words BLOB NOT NULL)")
            db.execute("CREATE TABLE meta (stamp TEXT NOT NULL)")
            db.execute("INSERT INTO meta VALUES (?)", (_stamp(source),))
            # marshal: plain dicts, lists, tuples and strings, read back without running anything.
            db.executemany("INSERT INTO entries VALUES (?, ?)",
                           ((first, marshal.dumps(words)) for first, words in table.items()))
        db.close()
        os.chmod(tmp, 0o644)       # readable by the Lambda runtime's user when packaged
        os.replace(tmp, target)    # whole or not at all, also when processes build it at once
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


class SqliteTable:
    """The mapping pykakasi looks entries up in (``get(first character code)``), read on demand."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        self._loaded: dict[int, object] = {}

    def stamp(self) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT stamp FROM meta").fetchone()
        return row[0] if row else None

    def get(self, first: int, default=None):
        if first in self._loaded:
            return self._loaded[first]
        with self._lock:
            row = self._db.execute("SELECT words FROM entries WHERE first = ?", (first,)).fetchone()
        value = marshal.loads(row[0]) if row else default
        self._loaded[first] = value
        return value


def _cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "butai" / "readings.sqlite"


def _open(path: Path, stamp: str) -> SqliteTable | None:
    try:
        table = SqliteTable(path)
        return table if table.stamp() == stamp else None
    except sqlite3.Error:
        return None


def table() -> SqliteTable | None:
    """The dictionary as an SQLite table: packaged, cached, or built now; None if none can be had."""
    stamp = _stamp(_source())
    configured = os.environ.get("BUTAI_READINGS_FILE")
    candidates = [Path(configured)] if configured else [PACKAGED, _cache_file()]
    for path in candidates:
        if path.exists():
            found = _open(path, stamp)
            if found is not None:
                return found
    target = candidates[-1]
    try:
        build(target)
    except OSError:
        return None     # a read-only place: pykakasi loads its own dictionary instead
    return _open(target, stamp)


def converter():
    """A pykakasi converter whose dictionary is read per character from SQLite."""
    import pykakasi
    from pykakasi.kanji import Kanwa
    found = table()
    if found is not None:
        # pykakasi 2.x keeps one dictionary for all converters in Kanwa's shared state and loads it only
        # while that is None; giving it the table first means the pickle is never read.
        Kanwa._shared_state["_jisyo_table"] = found
    return pykakasi.kakasi()


if __name__ == "__main__":
    # infra/package.sh: python -m chalicelib.interpret.readings (puts the table into the Lambda package)
    print(build(PACKAGED))
