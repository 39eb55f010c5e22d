"""The tab: what an item costs, the bill for what was ordered, money handed over (serving.py, bill.py)."""
from __future__ import annotations

from ...answers import Answer
from ..answering import Deliberation


def money(d: Deliberation) -> Answer | None:
    # (「ごちそうさまでした」 with the tab unpaid asks for the bill: turn.py, meal_done)
    paying = d.found_act.paying or "meal_done" in d.context
    answer = d.conv._money(d.text, d.state, d.free.speaker, d.mem, d.turn, d.variety, paying,
                           served=(d.context.get("order") or {}).get("item"))
    if answer is not None:
        d.context["money"] = answer.ref
    return answer
