"""Small readings several policies share."""
from __future__ import annotations

from ..forms import read_form


def asks_leave(text: str) -> bool:
    """The line asks leave (forms.py): something to grant, not a fact to look up (an offer of help may well be
    answered by the character's line on what help they want)."""
    found = read_form(text)
    return found is not None and found.form == "permission"
