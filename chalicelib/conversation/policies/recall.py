"""What was said before, said again (recalling.py): a topic asked about again, or news a character has."""
from __future__ import annotations

from ...answers import Answer
from ...scenario import PlayerInput
from ..answering import Deliberation
from ..recalling import _asked_part


def topic_again(d: Deliberation) -> Answer | None:
    """A vague pointer resolved to a topic that has nothing new, or a topic asked about again: what was said
    of it (when the question asks what that line told, not something else of the topic)."""
    free = d.free
    if free.intent is None or not (d.context.get("vague") or (
            d.asking and d.conv._names_topic(d.text, PlayerInput.intent(free.intent)))):
        return None
    recalled = d.conv._recall_topic(free.intent, d.state, d.mem, d.turn, d.variety, free.speaker,
                                    again=None if d.context.get("vague") else _asked_part(d.focus, d.conv.facts),
                                    head=d.focus.head_word)
    if recalled is not None:
        d.context["recall_topic"] = free.intent
    return recalled


def news(d: Deliberation) -> Answer | None:
    """A statement about something a character here knows: they go on about it."""
    if d.asking or d.own:
        return None
    return d.conv._recall(d.text, d.state, d.free, d.mem, d.turn, d.variety, d.context, only=d.addressed,
                          statement=True, head=d.focus.head_word)
