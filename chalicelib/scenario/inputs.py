"""`PlayerInput`: what one player turn means to the rules.

The written form (`意図:X`, `移動:P`, `離脱`, `なし`) is the one fact shared by
scenario conditions, CLIs, evaluation sets and logs, so parsing and printing
live here and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class InputKind(StrEnum):
    INTENT = "intent"      # 意図:X — the player said something the scenario has an intent for
    MOVE = "move"          # 移動:P — go to place P
    LEAVE = "leave"        # 離脱 — leave the place (the game may end)
    NONE = "none"          # なし — nothing the scenario has a name for

INTENT_PREFIX = "意図:"
MOVE_PREFIX = "移動:"
LEAVE_WORD = "離脱"
NONE_WORD = "なし"

_KINDS_WITH_TARGET = {InputKind.INTENT: INTENT_PREFIX, InputKind.MOVE: MOVE_PREFIX}
_BARE = {InputKind.LEAVE: LEAVE_WORD, InputKind.NONE: NONE_WORD}
_BARE_BY_WORD = {word: kind for kind, word in _BARE.items()}

SYNTAX_HELP = "意図:X, 移動:P, 離脱 or なし"


class InputSyntaxError(ValueError):
    """Raised for text that is not a player input in the written form."""


@dataclass(frozen=True, slots=True)
class PlayerInput:
    kind: InputKind
    target: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, InputKind):
            try:
                object.__setattr__(self, "kind", InputKind(self.kind))
            except ValueError:
                raise InputSyntaxError(f"unknown input kind {self.kind!r}") from None
        if self.kind in _KINDS_WITH_TARGET:
            if not isinstance(self.target, str) or not self.target or self.target != self.target.strip():
                raise InputSyntaxError(f"{self.kind} input needs a non-empty target without surrounding spaces")
        elif self.kind in _BARE:
            if self.target is not None:
                raise InputSyntaxError(f"{self.kind} input takes no target")
        else:
            raise InputSyntaxError(f"unknown input kind {self.kind!r}")

    @property
    def target_id(self) -> str:
        """The target of an intent or a move input (which always has one)."""
        if self.target is None:
            raise ValueError(f"{self.kind} input has no target")
        return self.target

    # Constructors read better at call sites than PlayerInput(InputKind.INTENT, "音楽").
    @classmethod
    def intent(cls, intent_id: str) -> PlayerInput:
        return cls(InputKind.INTENT, intent_id)

    @classmethod
    def move(cls, place_id: str) -> PlayerInput:
        return cls(InputKind.MOVE, place_id)

    @classmethod
    def leave(cls) -> PlayerInput:
        return LEAVE

    @classmethod
    def none(cls) -> PlayerInput:
        return NONE

    @classmethod
    def parse(cls, text: str) -> PlayerInput:
        if not isinstance(text, str):
            raise InputSyntaxError(f"expected a string like {SYNTAX_HELP}, got {type(text).__name__}")
        if text in _BARE_BY_WORD:
            return LEAVE if _BARE_BY_WORD[text] == InputKind.LEAVE else NONE
        for kind, prefix in _KINDS_WITH_TARGET.items():
            if text.startswith(prefix):
                target = text[len(prefix):]
                if not target:
                    raise InputSyntaxError(f'"{text}": missing the {"intent" if kind == InputKind.INTENT else "place"} after "{prefix}"')
                if target != target.strip():
                    raise InputSyntaxError(f'"{text}": remove the spaces around "{target.strip()}"')
                return cls(kind, target)
        hint = ""
        if "：" in text:
            hint = ' (use the ASCII colon ":" instead of "：")'
        elif text.strip() != text and text.strip():
            hint = " (remove the surrounding spaces)"
        raise InputSyntaxError(f'"{text}" is not a player input; expected {SYNTAX_HELP}{hint}')

    def __str__(self) -> str:
        if self.kind == InputKind.INTENT:
            return INTENT_PREFIX + self.target_id
        if self.kind == InputKind.MOVE:
            return MOVE_PREFIX + self.target_id
        return _BARE[self.kind]

    def __repr__(self) -> str:
        return f"PlayerInput({str(self)!r})"

    @property
    def is_intent(self) -> bool:
        return self.kind == InputKind.INTENT

    @property
    def is_move(self) -> bool:
        return self.kind == InputKind.MOVE

    @property
    def is_leave(self) -> bool:
        return self.kind == InputKind.LEAVE

    @property
    def is_none(self) -> bool:
        return self.kind == InputKind.NONE

    @property
    def moves_away(self) -> bool:
        """A move or 離脱: the input takes the player away from where they are."""
        return self.kind in (InputKind.MOVE, InputKind.LEAVE)


LEAVE = PlayerInput(InputKind.LEAVE)
NONE = PlayerInput(InputKind.NONE)
