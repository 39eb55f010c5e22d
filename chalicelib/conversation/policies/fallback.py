"""The last answer: one of the character's fallback lines."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation


def fallback(d: Deliberation) -> Answer:
    return d.make(d.conv.answerer.fallback(d.free.speaker, d.state, d.turn, d.variety))
