"""Regional forms read as the standard ones the cues are written for.

Cue patterns (yes and no, orders, permission to go, questions back) are written in standard Japanese; a player
who says 「入ってええ？」「直さへんの？」「なんぼ？」「頼んどらんよ」 means 入っていい, 直さないの, いくら, 頼んでない.
``standard(text)`` rewrites frequent forms whose standard reading is not in doubt, before a line is read (the
player's own words are logged as they were written).  The forms are data (lexicon/dialect.json, each with the
texts it must rewrite and those it must leave alone).
"""
from __future__ import annotations

import re
from functools import cache

from .. import lazyre
from .lexicon import rewrites


@cache
def _rules() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((lazyre.compile(rule.regex), rule.standard) for rule in rewrites("dialect"))


def standard(text: str) -> str:
    """`text` (normalised) with regional forms read as standard Japanese."""
    for pattern, replacement in _rules():
        text = pattern.sub(replacement, text)
    return text
