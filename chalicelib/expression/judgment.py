"""What an expression judge is asked and what it answers.

The same constrained-choice idea as input interpretation: the caller offers a
closed set of labels (the speaking character's own expression keys, always
with ``neutral``), the judge answers exactly one of them with a score per
label.  A judge never raises: a failure is a judgment with ``error`` set.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..faces import NEUTRAL

# Families of feeling the embedded judge knows.  A character's key belongs to
# the family named like it, or listed here (a character drawn with `happy`
# rather than `smile` is still judged); any other key is offered to model
# judges only.
FAMILIES: dict[str, tuple[str, ...]] = {
    "smile": ("smile", "happy", "joy", "laugh", "grin"),
    "troubled": ("troubled", "sad", "worried", "sorry", "upset", "cry"),
    "surprised": ("surprised", "shocked", "astonished"),
    "embarrassed": ("embarrassed", "shy", "blush"),
    "determined": ("determined", "serious", "resolute"),
    "angry": ("angry", "mad", "annoyed", "furious"),
}
FAMILY_OF: dict[str, str] = {key: family for family, keys in FAMILIES.items() for key in keys}

# Feelings that contradict each other: showing one on a line that says the
# other (a smile on an apology) is the judge's one unforgivable mistake.
POSITIVE = frozenset({"smile"})
NEGATIVE = frozenset({"troubled", "angry"})


def family(key: str) -> str | None:
    return FAMILY_OF.get(key)


def contradicts(shown: str, meant: str) -> bool:
    """Whether showing ``shown`` on a line meant as ``meant`` turns its feeling around."""
    a, b = family(shown), family(meant)
    return (a in POSITIVE and b in NEGATIVE) or (a in NEGATIVE and b in POSITIVE)


@dataclass(frozen=True)
class ExpressionChoice:
    """The labels offered for one line: the character's keys, ``neutral`` first."""
    keys: tuple[str, ...]
    character: str = ""
    character_name: str = ""

    @classmethod
    def of(cls, keys: Iterable[str], character: str = "", character_name: str = "") -> ExpressionChoice:
        ordered = [NEUTRAL] + [k for k in dict.fromkeys(keys) if k != NEUTRAL]
        return cls(tuple(ordered), character, character_name)


@dataclass
class Judgment:
    """One judge call's outcome; ``expression`` is always one of the offered keys."""
    expression: str = NEUTRAL
    scores: dict[str, float] = field(default_factory=dict)   # per offered key, summing to 1 when known
    judge: str = ""
    elapsed_ms: float = 0.0
    error: str | None = None          # why a model judge failed (its fallback then answered)
    detail: str | None = None
    cues: list[str] = field(default_factory=list)            # what the embedded judge went by

    def rounded_scores(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in self.scores.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"expression": self.expression, "scores": self.rounded_scores(), "judge": self.judge,
                "ms": round(self.elapsed_ms, 3), "error": self.error, "detail": self.detail,
                "cues": list(self.cues)}


@runtime_checkable
class ExpressionJudge(Protocol):
    name: str

    def judge(self, text: str, choice: ExpressionChoice) -> Judgment:
        ...
