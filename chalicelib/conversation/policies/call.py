"""A line that only calls someone (「ママ？」「ねえ、葵ちゃん」): the one called brings something up."""
from __future__ import annotations

from ...answers import Answer
from ...interpret.acts import CALL_ONLY
from ..answering import Deliberation


def called(d: Deliberation) -> Answer | None:
    # (not when it answers what was just asked: 「誰に似てると思う？」「ママ！」)
    question = d.question
    just_asked = question is not None and question.kind == "wh" and question.turn >= d.state.turn
    if d.found_act.cue != CALL_ONLY or just_asked:
        return None
    found = d.conv._chatter(d.free.speaker, d.state, d.turn, d.variety)
    return d.make(found) if found is not None else None
