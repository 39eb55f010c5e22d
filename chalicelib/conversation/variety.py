"""No line said over and over: what may be said again, and when.

The variation modes of a set (cycle, shuffle, once: ``scenario.variation``) keep one set from repeating
itself; this policy looks across every set, by what the player reads:

- no authored line (the same text, whichever set holds it) is said again within ``WINDOW`` turns;
- none is said more than ``PER_GAME`` times in one game;
- a line that tells what was already told in other words (葵's 「お店の写真、こっそり撮りためてるの」 after the
  scripted 「お店の写真、こっそり撮りためてたの」) is not news any more: it is not said as news again;
- a line kept from someone (its `secret_from`) is not said while they are present;
- unless nothing else fits: then the line said least often, longest ago, answers.

What was said and when is the conversation memory's ``said`` (reference → turns), stored with the turn.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from .book import LineBook
from .facts import Facts

WINDOW = 12          # turns before a line may be said again
PER_GAME = 2         # times a line may be said in one game
# Lines whose content is news (what a character tells), as opposed to answers of a kind (an order's
# acknowledgement, a greeting, a reply, a lead-in): only these are checked for content told before.
_NEWS_KINDS = ("knowledge", "chatter", "line", "arrival")


class Variety:
    def __init__(self, said: Mapping[str, list[int]], turn: int, book: LineBook, *, facts: Facts | None = None,
                 present: Iterable[str] = ()) -> None:
        self.turn = turn
        self.book = book
        self.facts = facts
        self.present = frozenset(present)
        self._said_refs = [ref for ref, turns in said.items() if turns]
        self._by_text: dict[str, list[int]] = {}
        for ref, turns in said.items():
            text = book.text(ref)
            key = text.strip() if text else ref
            self._by_text.setdefault(key, []).extend(turns)
        self._told: dict[str, bool] = {}

    def note(self, refs: Iterable[str]) -> None:
        """Lines said earlier in this turn (a first part's answer): not said again in it."""
        for ref in refs:
            text = self.book.text(ref)
            self._by_text.setdefault(text.strip() if text else ref, []).append(self.turn)
            self._said_refs.append(ref)
        self._told.clear()

    def _turns(self, ref: str) -> list[int]:
        text = self.book.text(ref)
        return sorted(self._by_text.get(text.strip() if text else ref, ()))

    def fresh(self, ref: str) -> bool:
        """Whether the line may be said now."""
        if self.kept_from_present(ref):
            return False
        turns = self._turns(ref)
        if len(turns) >= PER_GAME:
            return False
        if turns:
            return self.turn - turns[-1] > WINDOW
        return not self.told(ref)

    def kept_from_present(self, ref: str) -> bool:
        line = self.book.get(ref)
        return line is not None and bool(self.present & set(line.secret_from))

    def told(self, ref: str) -> bool:
        """Whether what the line tells was told already, in other words (a line said before is `_turns`'s)."""
        if self.facts is None or ref.split("/", 1)[0] not in _NEWS_KINDS:
            return False
        if ref not in self._told:
            line = self.book.get(ref)
            speaker = line.speaker if line is not None else None
            others = [r for r in self._said_refs if r != ref and self.book.text(r) != self.book.text(ref)
                      and (other := self.book.get(r)) is not None and other.speaker == speaker]
            self._told[ref] = self.facts.told(ref, others)
        return self._told[ref]

    def times(self, ref: str) -> int:
        return len(self._turns(ref))

    def staleness(self, ref: str) -> tuple[int, int]:
        """Sort key for "nothing else fits": fewest times, then longest ago."""
        turns = self._turns(ref)
        return (len(turns), turns[-1] if turns else -1)

    def least_said(self, refs: Iterable[str]) -> str | None:
        refs = list(refs)
        refs = [r for r in refs if not self.kept_from_present(r)] or refs
        return min(refs, key=self.staleness) if refs else None


def remember_said(said: dict[str, list[int]], refs: Iterable[str], turn: int) -> None:
    """Record lines said on `turn` (a few turns per line are enough for both rules)."""
    for ref in refs:
        turns = said.setdefault(ref, [])
        if not turns or turns[-1] != turn:
            turns.append(turn)
        del turns[:-(PER_GAME + 2)]
