"""A question or request of a known form nothing authored answers (may I…?, shall I…?, is there…?): the
character's answer for that form, not a stock "I don't know" (forms.py)."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation


def known_form(d: Deliberation) -> Answer | None:
    return d.conv._form(d.text, d.focus, d.free.speaker, d.word(), d.act, d.state, d.turn, d.variety, d.context)
