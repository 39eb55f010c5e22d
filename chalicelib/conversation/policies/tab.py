"""The tab: what an item costs, the bill for what was ordered, money handed over (serving.py, bill.py)."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation


def money(d: Deliberation) -> Answer | None:
    answer = d.conv._money(d.text, d.state, d.free.speaker, d.mem, d.turn, d.variety, d.found_act.paying,
                           served=(d.context.get("order") or {}).get("item"))
    if answer is not None:
        d.context["money"] = answer.ref
    return answer
