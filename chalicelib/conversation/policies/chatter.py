"""Small talk nothing else answers: the character brings something up (their `chatter`, each once a game)."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation
from ..facts import is_question


def small_talk(d: Deliberation) -> Answer | None:
    if is_question(d.text):
        return None
    found = d.conv._chatter(d.free.speaker, d.state, d.turn, d.variety)
    return d.make(found) if found is not None else None
