"""Word meaning from static word vectors: which words are near which.

The table (``data/meaning.bin``, built by ``scripts/build_word_meaning.py``)
comes from the chiVe vectors that GiNZA's ``ja_ginza`` package ships
(20,000 rows for 480k Sudachi-normalised words; Apache-2.0 vectors, MIT
package).  It holds, per word, its row, and per row the rows whose (centred)
cosine with it is at least 0.35 (at most 128).  Reading it needs only the standard library:
two sorted arrays for the words (binary search on an 8-byte hash) and a
compressed-row list of neighbours; it loads in a few milliseconds.

`MeaningIndex` relates a player's tokens to labelled sets of anchor words
(an intent's words and the content words of its examples and description):
``related(tokens)`` gives, per label, the best cosine of any token with any
of its anchors, with the token that gave it.  Words spelled the same are
found by word narrowing already; meaning is for the rest (ジンジャーエール
near 酒, 口コミ near 宣伝).
"""
from __future__ import annotations

import hashlib
import json
import struct
import sys
import threading
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .tokens import Token

DATA = Path(__file__).resolve().parent / "data" / "meaning.bin"
MAGIC = b"BUTAIWM1"
# Two words that the table stores in the same row (the row stands for the
# words nearest to it) are close, but not the same word.
SAME_ROW_COSINE = 0.6


def word_key(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")


class WordMeaning:
    """The loaded table."""

    def __init__(self, blob: bytes) -> None:
        if blob[:8] != MAGIC:
            raise ValueError("not a butai word-meaning table")
        size = struct.unpack_from("<I", blob, 8)[0]
        self.header = json.loads(blob[12:12 + size])
        pos = 12 + size
        words, rows = self.header["words"], self.header["rows"]
        self.scale = float(self.header.get("scale", 255))

        def take(code: str, count: int) -> array:
            nonlocal pos
            a = array(code)
            nbytes = a.itemsize * count
            a.frombytes(blob[pos:pos + nbytes])
            if sys.byteorder != "little":
                a.byteswap()
            pos += nbytes
            return a

        self._keys = take("Q", words)
        self._rows = take("H", words)
        self._offsets = take("I", rows + 1)
        total = self._offsets[-1]
        self._near = take("H", total)
        self._sims = take("B", total)

    def row(self, word: str) -> int | None:
        key = word_key(word)
        i = bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            return self._rows[i]
        return None

    def neighbours(self, row: int) -> Iterable[tuple[int, float]]:
        a, b = self._offsets[row], self._offsets[row + 1]
        scale = self.scale
        return ((self._near[i], self._sims[i] / scale) for i in range(a, b))

    def cosine(self, first: str, second: str) -> float:
        """Cosine of two words (0 below the table's floor or when unknown)."""
        a, b = self.row(first), self.row(second)
        if a is None or b is None:
            return 0.0
        if a == b:
            return 1.0 if first == second else SAME_ROW_COSINE
        return max((s for r, s in self.neighbours(a) if r == b), default=0.0)


_LOADED: WordMeaning | None = None
_MISSING = False
_LOCK = threading.Lock()


def word_meaning(path: Path | None = None) -> WordMeaning | None:
    """The packaged table, loaded once per process; None when it is absent."""
    global _LOADED, _MISSING
    if path is not None:
        return WordMeaning(Path(path).read_bytes())
    if _LOADED is None and not _MISSING:
        with _LOCK:
            if _LOADED is None and not _MISSING:
                try:
                    _LOADED = WordMeaning(DATA.read_bytes())
                except (OSError, ValueError):
                    _MISSING = True
    return _LOADED


def token_forms(token: Token) -> tuple[str, ...]:
    """The spellings to look a token up by: normalised form first (the
    table's own), then the dictionary form and the surface."""
    return tuple(dict.fromkeys(f for f in (token.normalised, token.lemma, token.surface) if f))


@dataclass(frozen=True)
class Related:
    cosine: float
    word: str          # the player's word (surface)
    anchor: str        # the anchor it is near
    start: int
    end: int


class MeaningIndex:
    """Anchors per label, prepared once (per scenario) for fast lookups."""

    def __init__(self, table: WordMeaning, anchors: Mapping[str, Sequence[str]]) -> None:
        self.table = table
        self.anchors = {label: tuple(dict.fromkeys(words)) for label, words in anchors.items()}
        # row → label → (cosine, anchor): the anchors themselves and their neighbours
        self._near: dict[int, dict[str, tuple[float, str]]] = {}
        self._anchor_rows: dict[int, list[tuple[str, str]]] = {}     # row → (label, anchor)
        self._own: dict[str, set[str]] = {}
        for label, words in self.anchors.items():
            self._own[label] = set(words)
            for word in words:
                row = table.row(word)
                if row is None:
                    continue
                self._put(row, label, SAME_ROW_COSINE, word)
                self._anchor_rows.setdefault(row, []).append((label, word))
                for near, cosine in table.neighbours(row):
                    self._put(near, label, cosine, word)

    def _put(self, row: int, label: str, cosine: float, anchor: str) -> None:
        slot = self._near.setdefault(row, {})
        if cosine > slot.get(label, (0.0, ""))[0]:
            slot[label] = (cosine, anchor)

    def token_related(self, token: Token) -> dict[str, Related]:
        """Per label, how near this token is to its anchors (a token that is
        one of a label's anchors is left to word matching for that label)."""
        out: dict[str, Related] = {}
        for form in token_forms(token):
            row = self.table.row(form)
            if row is None:
                continue
            found = dict(self._near.get(row, {}))
            # the token's own neighbours too: an anchor's list is cut at its nearest rows, and a word
            # may be among a token's nearest without being among the anchor's (ジンジャーエール ~ 味)
            for near, cosine in self.table.neighbours(row):
                for label, anchor in self._anchor_rows.get(near, ()):
                    if cosine > found.get(label, (0.0, ""))[0]:
                        found[label] = (cosine, anchor)
            for label, (cosine, anchor) in found.items():
                if form in self._own[label]:
                    continue         # the anchor itself: word matching's business, not meaning's
                if label not in out or cosine > out[label].cosine:
                    out[label] = Related(cosine, token.surface, anchor, token.start, token.end)
            break                    # the first spelling the table knows decides
        return out
