"""Money read one way for every layer: whether a line asks to pay, and the line with a paying word that is taken
back (「お勘定ちゃうで」「お会計はまだいいです」) set aside, so the act recogniser, orders, serving and the bill agree.
The words are data (lexicon/money.json)."""
from __future__ import annotations

import re

from .counts import number
from .lexicon import compiled
from .text import nfkc


def money(name: str) -> re.Pattern[str]:
    """One pattern of the money table."""
    return compiled("money", name)


def without_put_off(text: str) -> str:
    """`text` with every paying word that is denied or put off taken out with what takes it back: 「お勘定ちゃうで、
    もう一杯」 is left 「で、もう一杯」, an order; 「お会計はまだいいです」 asks for no bill."""
    return money("put_off").sub("", text)


def asks_to_pay(text: str) -> bool:
    """Whether `text` (normalised) asks for the bill or to pay, a paying word that is taken back not counted."""
    return bool(money("paying_cue").search(without_put_off(text)))


def handed_amount(text: str) -> int | None:
    """The sum of money `text` hands over or names (「はい、3,000円」「一万円で」「5千円札で」), if it names one."""
    normalised = nfkc(text)
    large = money("large_amount").search(normalised)
    if large is not None:
        n = (number(large.group("n")) or 1) if large.group("n") else 1
        return n * (10000 if large.group("man") else 1000)
    found = money("amount").search(normalised)
    digits = re.sub(r"\D", "", found.group(0)) if found else ""
    return int(digits) if digits else None
