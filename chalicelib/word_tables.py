"""The lexicon's JSON tables (interpret/lexicon/*.json) read by one rule: a file's data, and a pattern's source
with the siblings it names as ``<<name>>`` spliced in as non-capturing groups (a shape written once).

A leaf, so that what sits below interpret/ (expression/, which judges faces) reads its table by the same rule
as interpret/lexicon does.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "interpret" / "lexicon"


@cache
def _reference() -> re.Pattern[str]:
    return re.compile(r"<<([A-Za-z_][A-Za-z0-9_]*)>>")


def read(folder: Path, name: str) -> dict:
    """The data of the table file `name` in `folder`."""
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


def spliced(raw: Mapping[str, Any], table: str, name: str, seen: tuple[str, ...] = ()) -> str:
    """The source of pattern `name` among a table's raw patterns (a string, or an entry with its `regex`), the
    siblings it names spliced in; a pattern that refers to itself through others is an error."""
    if name in seen:
        raise ValueError(f"lexicon table {table}: pattern {name} refers to itself through {seen}")
    if name not in raw:
        raise KeyError(f"lexicon table {table} has no pattern {name}")
    entry = raw[name]
    source = entry if isinstance(entry, str) else entry["regex"]
    return _reference().sub(lambda m: f"(?:{spliced(raw, table, m.group(1), seen + (name,))})", source)
