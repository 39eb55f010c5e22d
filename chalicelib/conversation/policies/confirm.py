"""「三十年も？」 right after 三十年 was said: that fact again, not a line sharing another word (confirm.py)."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation


def confirmed(d: Deliberation) -> Answer | None:
    if d.free.intent is not None:
        return None
    answer = d.conv._confirmed(d.text, d.state, d.mem, d.turn, d.variety)
    if answer is not None:
        d.context["confirmed"] = answer.detail.get("recalled")
    return answer
