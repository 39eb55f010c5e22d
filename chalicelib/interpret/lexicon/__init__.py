"""Japanese word classes as data: each class is a JSON file here with its entries and examples.

A class file holds `class`, `description`, `entries` (the words) and `examples` (`positive`: texts the class's
matcher must find a word in; `negative`: texts it must not).  tests/interpret/test_lexicon.py runs every
class's examples through the matcher the engine uses, so a word added or removed is checked where it is
used.  The words of a scenario's own world (names, roles, items, places) come from the scenario, never from
here.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_HERE = Path(__file__).resolve().parent


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

    def at_start(self, text: str) -> str | None:
        """The entry `text` starts with (the longest), if any."""
        m = _prefix(self.name).match(text)
        return m.group(0) if m else None


@cache
def word_class(name: str) -> WordClass:
    data = json.loads((_HERE / f"{name}.json").read_text(encoding="utf-8"))
    examples = data.get("examples", {})
    return WordClass(data["class"], data.get("description", ""), tuple(data["entries"]),
                     tuple(examples.get("positive", ())), tuple(examples.get("negative", ())),
                     tuple(data.get("kept", ())))


@cache
def _prefix(name: str) -> re.Pattern[str]:
    return re.compile(f"(?:{word_class(name).alternation})")


def class_names() -> list[str]:
    return sorted(p.stem for p in _HERE.glob("*.json"))
