"""A pick among options a character offered, and a settled choice asked about again (picks.py, choices.py)."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation
from ..choices import asked_again


def picked(d: Deliberation) -> Answer | None:
    """The option picked of those the character asked about: its entry's line, else the reply."""
    pick = d.context.get("picked")
    if pick is None:
        return None
    found = d.conv._picked_line(pick, d.state, d.turn, d.variety)
    return d.make(found) if found is not None else None


def asked_again_(d: Deliberation) -> Answer | None:
    """「結局どっちにしたの？」 after a choice was settled: the chosen option's line again."""
    people = d.conv.rules.people(d.state.place)
    if d.context.get("taken_back"):
        return None          # 「生成りじゃなくて紺です」: a change of mind, not the choice asked about again
    settled = asked_again([e for p in people for e in d.conv.answerer.entries_of(p)], d.state, d.text,
                          topic=d.free.intent is not None)
    if not settled:
        return None
    again = d.conv._say_ref(settled, d.state, d.turn)
    if again is not None:
        d.context["choice"] = settled
    return again
