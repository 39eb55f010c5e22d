"""Which of several authored lines to say now, so that lines never repeat mechanically.

A set of lines (a reaction, a knowledge entry's answers, the fallbacks, an
arrival) varies in one of three modes, as in ink's variation sequences:

- ``cycle``: in order, starting again after the last;
- ``shuffle``: a pseudo-random line that is not among the last few said
  (``WINDOW``), picked by a hash of the game's turn, so a replayed game says
  the same lines;
- ``once``: each line once per game, then nothing (the next layer answers).

Never the same line twice in a row: a set of one line answers every other
time.  What was said is kept in the game state (`GameState.variation`, a short
history per set), so the choice is pure and stored with the turn.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Literal

Mode = Literal["cycle", "shuffle", "once"]
WINDOW = 3          # shuffle: none of the last WINDOW lines (fewer when the set is smaller)


def reaction_key(character: str, act: str) -> str:
    return f"reaction/{character}/{act}"


def knowledge_key(character: str, index: int) -> str:
    return f"knowledge/{character}/{index}"


def fallback_key(character: str) -> str:
    return f"fallback/{character}"


def arrival_key(place: str) -> str:
    return f"arrival/{place}"


def pick(count: int, mode: Mode, history: Sequence[int], seed: str,
         allowed: Callable[[int], bool] | None = None) -> int | None:
    """The index of the line to say next, or None when the set has nothing
    to say now (empty, a `once` set used up, or a single line just said).
    `allowed` (optional) rules out lines a wider policy keeps back (said too
    recently anywhere, said enough this game): the set's next allowed line
    answers, in the set's own order."""
    if count <= 0:
        return None
    ok = allowed or (lambda i: True)
    if mode == "once":
        used = set(history)
        return next((i for i in range(count) if i not in used and ok(i)), None)
    last = history[-1] if history else None
    if mode == "cycle":
        first = 0 if last is None or last >= count else (last + 1) % count
        order = [(first + k) % count for k in range(count)]
        return next((i for i in order if i != last and ok(i)), None)
    recent = set(history[-min(count - 1, WINDOW):]) if count > 1 else set()
    free = [i for i in range(count) if i not in recent and i != last and ok(i)]
    if not free:
        return None
    digest = hashlib.blake2b(seed.encode("utf-8"), digest_size=4).digest()
    return free[int.from_bytes(digest, "big") % len(free)]


def remember(history: Sequence[int], index: int, count: int) -> tuple[int, ...]:
    """The history after saying line `index`: at most `count` entries (enough
    for `once` and for the shuffle window)."""
    kept = max(count, WINDOW)
    return (*history, index)[-kept:]
