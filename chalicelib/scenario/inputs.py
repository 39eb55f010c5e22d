"""`PlayerInput`: what one player turn means to the rules.

The written form (`意図:X`, `移動:P`, `離脱`, `なし`) is the one fact shared by
scenario conditions, CLIs, evaluation sets and logs, so parsing and printing
live here and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

InputKind = Literal["intent", "move", "leave", "none"]

INTENT_PREFIX = "意図:"
MOVE_PREFIX = "移動:"
LEAVE_WORD = "離脱"
NONE_WORD = "なし"

_KINDS_WITH_TARGET = {"intent": INTENT_PREFIX, "move": MOVE_PREFIX}
_BARE = {"leave": LEAVE_WORD, "none": NONE_WORD}
_BARE_BY_WORD = {word: kind for kind, word in _BARE.items()}

SYNTAX_HELP = "意図:X, 移動:P, 離脱 or なし"


class InputSyntaxError(ValueError):
    """Raised for text that is not a player input in the written form."""


@dataclass(frozen=True, slots=True)
class PlayerInput:
    kind: InputKind
    target: str | None = None

    def __post_init__(self) -> None:
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

    # Constructors read better at call sites than PlayerInput("intent", "音楽").
    @classmethod
    def intent(cls, intent_id: str) -> PlayerInput:
        return cls("intent", intent_id)

    @classmethod
    def move(cls, place_id: str) -> PlayerInput:
        return cls("move", place_id)

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
            return LEAVE if _BARE_BY_WORD[text] == "leave" else NONE
        for kind, prefix in _KINDS_WITH_TARGET.items():
            if text.startswith(prefix):
                target = text[len(prefix):]
                if not target:
                    raise InputSyntaxError(f'"{text}": missing the {"intent" if kind == "intent" else "place"} after "{prefix}"')
                if target != target.strip():
                    raise InputSyntaxError(f'"{text}": remove the spaces around "{target.strip()}"')
                return cls(kind, target)  # type: ignore[arg-type]
        hint = ""
        if "：" in text:
            hint = ' (use the ASCII colon ":" instead of "：")'
        elif text.strip() != text and text.strip():
            hint = " (remove the surrounding spaces)"
        raise InputSyntaxError(f'"{text}" is not a player input; expected {SYNTAX_HELP}{hint}')

    def __str__(self) -> str:
        if self.kind == "intent":
            return INTENT_PREFIX + self.target_id
        if self.kind == "move":
            return MOVE_PREFIX + self.target_id
        return _BARE[self.kind]

    def __repr__(self) -> str:
        return f"PlayerInput({str(self)!r})"

    @property
    def is_intent(self) -> bool:
        return self.kind == "intent"

    @property
    def is_move(self) -> bool:
        return self.kind == "move"

    @property
    def intent_id(self) -> str | None:
        return self.target if self.kind == "intent" else None

    @property
    def place_id(self) -> str | None:
        return self.target if self.kind == "move" else None

    # Lets other packages put PlayerInput straight into pydantic models; it
    # travels as its written form so logs and JSON stay readable.
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def validate(value: Any) -> PlayerInput:
            if isinstance(value, PlayerInput):
                return value
            try:
                return cls.parse(value)
            except InputSyntaxError as exc:
                raise ValueError(str(exc)) from None

        return core_schema.no_info_plain_validator_function(
            validate,
            serialization=core_schema.plain_serializer_function_ser_schema(str),
            json_schema_input_schema=core_schema.str_schema(),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "string", "description": f"player input: {SYNTAX_HELP}"}


LEAVE = PlayerInput("leave")
NONE = PlayerInput("none")
