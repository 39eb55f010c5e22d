"""Japanese word classes as data: each class is a JSON file here with its entries and examples.

A class file holds `class`, `description`, `entries` (the words) and `examples` (`positive`: texts the class's
matcher must find a word in; `negative`: texts it must not).

Where a word class is a shape rather than a list (a verb stem and the endings that may follow it), a file holds
`patterns` instead: a table of named regular expressions, each with its own `positive` and `negative` examples
(texts `re.search` must find it in, and must not).  A pattern may use another pattern of the same file as
`<<name>>`; it is spliced in as a non-capturing group before compiling, so a shape is written once.  tests/interpret/test_lexicon.py runs every
class's examples through the matcher the engine uses, so a word added or removed is checked where it is
used.  The words of a scenario's own world (names, roles, items, places) come from the scenario, never from
here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from ... import lazyre
from ...word_tables import FOLDER, read, spliced

_HERE = FOLDER


@dataclass(frozen=True)
class WordClass:
    name: str
    description: str
    entries: tuple[str, ...]
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    kept: tuple[str, ...] = ()      # what a class says stays as it is (spellings: set phrases kept in kana)

    @property
    def alternation(self) -> str:
        """A regular expression alternation of the entries, longest first (so 先生 wins over a shorter one)."""
        return "|".join(re.escape(e) for e in sorted(self.entries, key=lambda e: (-len(e), e)))

    def search(self, text: str) -> str | None:
        """The first entry found anywhere in `text` (the longest at that place), if any."""
        m = _prefix(self.name).search(text)
        return m.group(0) if m else None

    def at_start(self, text: str) -> str | None:
        """The entry `text` starts with (the longest), if any."""
        m = _prefix(self.name).match(text)
        return m.group(0) if m else None


@cache
def word_class(name: str) -> WordClass:
    data = _data(name)
    examples = data.get("examples", {})
    return WordClass(data["class"], data.get("description", ""), tuple(data["entries"]),
                     tuple(examples.get("positive", ())), tuple(examples.get("negative", ())),
                     tuple(data.get("kept", ())))


@cache
def _prefix(name: str) -> re.Pattern[str]:
    return re.compile(f"(?:{word_class(name).alternation})")


def class_names() -> list[str]:
    """The word classes: files with `entries`."""
    return sorted(p.stem for p in _HERE.glob("*.json") if "entries" in _data(p.stem))


def table_names() -> list[str]:
    """The pattern tables: files with `patterns`."""
    return sorted(p.stem for p in _HERE.glob("*.json") if "patterns" in _data(p.stem))


@dataclass(frozen=True)
class Pattern:
    table: str
    name: str
    source: str                     # the regular expression, other patterns spliced in
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    note: str = ""


@cache
def _data(name: str) -> dict:
    return read(_HERE, name)


@cache
def patterns(table: str) -> dict[str, Pattern]:
    """Every pattern of a table, by name, with references to its siblings spliced in."""
    raw: dict = _data(table)["patterns"]

    out = {}
    for name, entry in raw.items():
        entry = {"regex": entry} if isinstance(entry, str) else entry
        out[name] = Pattern(table, name, spliced(raw, table, name), tuple(entry.get("positive", ())),
                            tuple(entry.get("negative", ())), entry.get("note", ""))
    return out


@dataclass(frozen=True)
class Rewrite:
    """A form read as another (dialect.json): `regex` replaced by `standard`, with the texts it must turn into
    what they read as, and the texts it must leave alone."""
    regex: str
    standard: str
    examples: tuple[tuple[str, str], ...]
    kept: tuple[str, ...]
    note: str = ""


@cache
def rewrites(table: str) -> tuple[Rewrite, ...]:
    """A table's rewrites, in the order they apply."""
    return tuple(Rewrite(r["regex"], r["standard"], tuple((e["said"], e["reads"]) for e in r.get("examples", ())),
                         tuple(r.get("kept", ())), r.get("note", "")) for r in _data(table)["rewrites"])


def kana_counters() -> dict[str, str]:
    """Counters written in kana and the counter they are (counts.json: ねん → 年, えん → 円)."""
    return dict(_data("counts").get("kana_counters", {}))


def listed(name: str, key: str) -> tuple[str, ...]:
    """A further list a class or table file keeps beside its entries (spellings.json: `followers`)."""
    return tuple(_data(name).get(key, ()))


def recognition() -> tuple[dict, ...]:
    """The order dialogue acts are tried in (acts.json): each step an act's key and its pattern or recogniser."""
    return tuple(_data("acts")["recognition"])


def values(table: str) -> dict[str, int]:
    """What a table's words are worth (counts.json: the native numbers and kanji digits), where it has them."""
    return dict(_data(table).get("values", {}))


def mapping(table: str, key: str) -> dict[str, str]:
    """A table's words read as other words (focus.json's `style_words`: 薄く → 薄め), where a file keeps one
    beside its patterns: {"key": {"note": ..., "map": {said: read}}}."""
    return dict(_data(table)[key]["map"])


def pattern(table: str, name: str) -> str:
    """The source of one pattern, to compile or to build a larger expression with."""
    return patterns(table)[name].source


@cache
def compiled(table: str, name: str, flags: int = 0) -> re.Pattern[str]:
    """One pattern of a table, compiled where it is first used (module-level names stay cheap to import)."""
    return lazyre.compile(pattern(table, name), flags)


def group(table: str, prefix: str) -> tuple[re.Pattern[str], ...]:
    """The patterns of a table whose names start with `prefix`, compiled where first used, in the file's order
    (moves.json: the forms after a verb's stem that commit to going, tried one by one)."""
    return tuple(compiled(table, name) for name in patterns(table) if name.startswith(prefix))
