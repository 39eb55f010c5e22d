"""`GameState`: where the player is, what has been shown, who looks how.

States are values: the rules never change a state, they return a new one.
The lines shown are kept in an append-only journal that successive states
share, each seeing its own prefix, so a step costs the same however long the
game has run (no copying of the shown list or set per step).  Branching from
an older state (handling two inputs on one state) copies the journal once.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..faces import NEUTRAL
from .conditions import FLAG_PREFIX

SCHEMA_VERSION = 1


class StateFormatError(ValueError):
    """A stored state that cannot be read back."""


class _Journal:
    __slots__ = ("ids", "pos", "lock")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}
        self.lock = threading.Lock()
        for line_id in ids:
            if line_id not in self.pos:
                self.pos[line_id] = len(self.ids)
                self.ids.append(line_id)

    def extended(self, length: int, new_ids: Iterable[str]) -> tuple[_Journal, int]:
        """Journal and length of a state that has seen the first `length`
        entries plus `new_ids`."""
        new_ids = list(new_ids)
        with self.lock:
            if len(self.ids) == length:
                for line_id in new_ids:
                    self.pos[line_id] = len(self.ids)
                    self.ids.append(line_id)
                return self, len(self.ids)
        fork = _Journal(self.ids[:length] + new_ids)
        return fork, len(fork.ids)


class ShownLines:
    """Read-only view of the lines a state has shown, and of its flags (as ``フラグ:NAME``); O(1) membership."""
    __slots__ = ("_pos", "_length", "flags")

    def __init__(self, journal: _Journal, length: int, flags: frozenset[str] = frozenset()) -> None:
        self._pos = journal.pos
        self._length = length
        self.flags = flags

    def __contains__(self, line_id: object) -> bool:
        p = self._pos.get(line_id)  # type: ignore[call-overload]
        if p is None and isinstance(line_id, str) and line_id.startswith(FLAG_PREFIX):
            return line_id[len(FLAG_PREFIX):] in self.flags
        return p is not None and p < self._length

    def __len__(self) -> int:
        return self._length


class StepShown:
    """Lines shown before this step plus those fired so far in it (and the flags, as in `ShownLines`)."""
    __slots__ = ("_pos", "_length", "fired", "flags")

    def __init__(self, base: ShownLines) -> None:
        self._pos = base._pos
        self._length = base._length
        self.fired: dict[str, None] = {}
        self.flags = set(base.flags)

    def __contains__(self, line_id: object) -> bool:
        p = self._pos.get(line_id)  # type: ignore[call-overload]
        if p is not None and p < self._length:
            return True
        if isinstance(line_id, str) and line_id.startswith(FLAG_PREFIX):
            return line_id[len(FLAG_PREFIX):] in self.flags
        return line_id in self.fired

    def add(self, line_id: str) -> None:
        self.fired[line_id] = None


class _StateRecord(BaseModel):
    """The stored form (e.g. a DynamoDB attribute)."""
    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(description="Format version of this record")
    place: str
    turn: int = Field(ge=0)
    shown: list[str] = Field(description="Line ids in the order they were shown")
    last_line: str | None = None
    expressions: dict[str, str] = Field(default_factory=dict)
    # Optional, so states stored before they existed still load.
    variation: dict[str, list[int]] = Field(default_factory=dict,
                                            description="Recent picks per set of varying lines (reactions, …)")
    ended: bool = Field(default=False, description="The game reached an ending")
    ending: str | None = Field(default=None, description="Which ending it reached (its id)")
    flags: list[str] = Field(default_factory=list, description="Flags set so far (orders, フラグ: effects)")


class GameState:
    __slots__ = ("place", "turn", "last_line", "expressions", "variation", "ended", "ending", "flags", "_journal",
                 "_length")

    place: str
    turn: int
    last_line: str | None
    expressions: Mapping[str, str]
    variation: Mapping[str, tuple[int, ...]]
    ended: bool
    ending: str | None
    flags: frozenset[str]
    _journal: _Journal
    _length: int

    def __init__(self, place: str, shown: Iterable[str] = (), last_line: str | None = None,
                 expressions: Mapping[str, str] | None = None, turn: int = 0, *,
                 variation: Mapping[str, Iterable[int]] | None = None, ended: bool = False,
                 flags: Iterable[str] = (), ending: str | None = None) -> None:
        journal = _Journal(shown)
        self._init(place, turn, last_line, dict(expressions or {}), journal, len(journal.ids),
                   {k: tuple(v) for k, v in (variation or {}).items()}, ended, frozenset(flags), ending)

    def _init(self, place: str, turn: int, last_line: str | None, expressions: dict[str, str],
              journal: _Journal, length: int, variation: dict[str, tuple[int, ...]], ended: bool,
              flags: frozenset[str] = frozenset(), ending: str | None = None) -> None:
        object.__setattr__(self, "variation", MappingProxyType(variation))
        object.__setattr__(self, "ended", ended)
        object.__setattr__(self, "ending", ending if ended else None)
        object.__setattr__(self, "flags", flags)
        object.__setattr__(self, "place", place)
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "last_line", last_line)
        object.__setattr__(self, "expressions", MappingProxyType(expressions))
        object.__setattr__(self, "_journal", journal)
        object.__setattr__(self, "_length", length)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("GameState is immutable; the rules return new states")

    # ---- reading

    @property
    def shown(self) -> ShownLines:
        """Membership view: `"A04" in state.shown` (O(1)); flags as `"フラグ:NAME" in state.shown`."""
        return ShownLines(self._journal, self._length, self.flags)

    @property
    def shown_lines(self) -> tuple[str, ...]:
        """Line ids in the order they were shown."""
        return tuple(self._journal.ids[: self._length])

    @property
    def shown_count(self) -> int:
        return self._length

    def has_shown(self, line_id: str) -> bool:
        p = self._journal.pos.get(line_id)
        return p is not None and p < self._length

    def expression(self, character: str) -> str:
        return self.expressions.get(character, NEUTRAL)

    def iter_shown(self) -> Iterator[str]:
        return iter(self._journal.ids[: self._length])

    # ---- deriving

    def advanced(self, *, place: str, fired: Iterable[str], expressions: Mapping[str, str],
                 turn: int, variation: Mapping[str, tuple[int, ...]] | None = None,
                 ended: bool | None = None, flags: Iterable[str] = (), ending: str | None = None) -> GameState:
        """The state after a step that fired `fired` (in order); `variation`
        holds only the sets that changed, `flags` only the flags newly set.
        A repeatable line fired again is not journalled twice."""
        fired = list(fired)
        new_ids = list(dict.fromkeys(f for f in fired if not self.has_shown(f)))
        journal, length = self._journal.extended(self._length, new_ids)
        new = object.__new__(GameState)
        new._init(place, turn, fired[-1] if fired else self.last_line, dict(expressions), journal, length,
                  {**self.variation, **(variation or {})}, self.ended if ended is None else ended,
                  self.flags | frozenset(flags), ending if ended else self.ending)
        return new

    def with_said(self, *, variation: Mapping[str, tuple[int, ...]],
                  expressions: Mapping[str, str] | None = None, flags: Iterable[str] = ()) -> GameState:
        """The same state after a line outside the script was said (a reaction,
        a knowledge answer, a fallback, an order's acknowledgement): its
        variation history, face and any flag it sets."""
        new = object.__new__(GameState)
        new._init(self.place, self.turn, self.last_line, dict(expressions if expressions is not None
                                                              else self.expressions),
                  self._journal, self._length, {**self.variation, **variation}, self.ended,
                  self.flags | frozenset(flags), self.ending)
        return new

    def passed(self) -> GameState:
        """The same state one turn later, nothing else changed (a turn the rules did not play: the
        character asked which topic the player meant)."""
        new = object.__new__(GameState)
        new._init(self.place, self.turn + 1, self.last_line, dict(self.expressions), self._journal, self._length,
                  dict(self.variation), self.ended, self.flags, self.ending)
        return new

    # ---- storing

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "place": self.place,
            "turn": self.turn,
            "shown": list(self.iter_shown()),
            "last_line": self.last_line,
            "expressions": dict(self.expressions),
            **({"variation": {k: list(v) for k, v in self.variation.items()}} if self.variation else {}),
            **({"ended": True} if self.ended else {}),
            **({"ending": self.ending} if self.ending else {}),
            **({"flags": sorted(self.flags)} if self.flags else {}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameState:
        if not isinstance(data, Mapping):
            raise StateFormatError(f"expected a JSON object for a game state, got {type(data).__name__}")
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise StateFormatError(f"game state schema_version {version!r} is not supported; expected {SCHEMA_VERSION}")
        try:
            record = _StateRecord.model_validate(dict(data))
        except ValidationError as exc:
            detail = "; ".join(f'{".".join(str(p) for p in e["loc"])}: {e["msg"]}' for e in exc.errors())
            raise StateFormatError(f"invalid game state: {detail}") from None
        if len(set(record.shown)) != len(record.shown):
            raise StateFormatError("invalid game state: a line appears twice in shown")
        return cls(record.place, record.shown, record.last_line, record.expressions, record.turn,
                   variation=record.variation, ended=record.ended, flags=record.flags, ending=record.ending)

    @classmethod
    def from_json(cls, text: str | bytes) -> GameState:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StateFormatError(f"invalid game state JSON at {exc.lineno}:{exc.colno}: {exc.msg}") from None
        return cls.from_dict(data)

    # ---- value semantics

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return (self.place == other.place and self.turn == other.turn and self.last_line == other.last_line
                and dict(self.expressions) == dict(other.expressions) and self.shown_lines == other.shown_lines
                and dict(self.variation) == dict(other.variation) and self.ended == other.ended
                and self.flags == other.flags and self.ending == other.ending)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"GameState(place={self.place!r}, turn={self.turn}, shown={list(self.iter_shown())!r}, "
                f"last_line={self.last_line!r})")
