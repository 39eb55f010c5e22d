"""No line said over and over: what may be said again, and when.

The variation modes of a set (cycle, shuffle, once: ``scenario.variation``) keep one set from repeating
itself; this policy looks across every set, by what the player reads:

- no authored line (the same text, whichever set holds it) is said again within ``WINDOW`` turns;
- none is said more than ``PER_GAME`` times in one game;
- unless nothing else fits: then the line said least often, longest ago, answers.

What was said and when is the conversation memory's ``said`` (reference → turns), stored with the turn.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .book import LineBook

WINDOW = 12          # turns before a line may be said again
PER_GAME = 2         # times a line may be said in one game


class Variety:
    def __init__(self, said: Mapping[str, list[int]], turn: int, book: LineBook) -> None:
        self.turn = turn
        self.book = book
        self._by_text: dict[str, list[int]] = {}
        for ref, turns in said.items():
            text = book.text(ref)
            key = text.strip() if text else ref
            self._by_text.setdefault(key, []).extend(turns)

    def _turns(self, ref: str) -> list[int]:
        text = self.book.text(ref)
        return sorted(self._by_text.get(text.strip() if text else ref, ()))

    def fresh(self, ref: str) -> bool:
        """Whether the line may be said now."""
        turns = self._turns(ref)
        if len(turns) >= PER_GAME:
            return False
        return not turns or self.turn - turns[-1] > WINDOW

    def times(self, ref: str) -> int:
        return len(self._turns(ref))

    def staleness(self, ref: str) -> tuple[int, int]:
        """Sort key for "nothing else fits": fewest times, then longest ago."""
        turns = self._turns(ref)
        return (len(turns), turns[-1] if turns else -1)

    def least_said(self, refs: Iterable[str]) -> str | None:
        refs = list(refs)
        return min(refs, key=self.staleness) if refs else None


def remember_said(said: dict[str, list[int]], refs: Iterable[str], turn: int) -> None:
    """Record lines said on `turn` (a few turns per line are enough for both rules)."""
    for ref in refs:
        turns = said.setdefault(ref, [])
        if not turns or turns[-1] != turn:
            turns.append(turn)
        del turns[:-(PER_GAME + 2)]
