"""Money read one way for every layer: whether a line asks to pay, and the line with a paying word that is taken
back (「お勘定ちゃうで」「お会計はまだいいです」) set aside, so the act recogniser, orders, serving and the bill agree.
The words are data (lexicon/money.json)."""
from __future__ import annotations

import re

from .asking import is_question, sentence_start
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
    """Whether `text` (normalised) asks for the bill or to pay, a paying word that is taken back not counted, nor
    a price asked of something else: of a thing named (「出張っていくら？」), or after another question
    (「飾りつけってやってます？料金いくらくらい？」 asks what that costs)."""
    kept = money("pays_for_it").sub("", without_put_off(text))    # (「私が払います」 treats: no bill asked)
    kept = money("receipt_asked").sub("", kept)    # (「領収書って出せます？」 asks about receipts, not for the bill)
    cues = list(money("paying_cue").finditer(kept))
    return any(not _price_of_other(kept, cue) for cue in cues)


def _price_of_other(text: str, cue: re.Match[str]) -> bool:
    """Whether the paying cue `cue` asks the price of something other than the tab."""
    if not money("price_asked").fullmatch(cue.group(0)):
        return False
    start = sentence_start(text, cue.start())
    if is_question(text[:start]) and not money("paying_cue").search(text[:start]):
        return True               # (「お会計まだでしたよね？いくらですか」: the question before is the bill's)
    thing = None
    # (the thing may be named, with its cost, in the sentence right before: 「銀星座のチケット代！いくら？」)
    before = sentence_start(text, start - 1) if start > 0 else start
    for found in money("price_of_thing").finditer(text, before):
        if found.end() >= cue.end():
            thing = _thing_priced(found)
            break
    return thing is not None and not money("bill_of").match(thing)


def prices_other_thing(text: str) -> bool:
    """Whether `text` (normalised) asks the price of a thing it names that is not the tab (「レコード針のお値段、
    どのくらいするものなんですか？」「出張っていくら？」)."""
    return any(not money("bill_of").match(_thing_priced(found).lstrip("、, "))
               for found in money("price_of_thing").finditer(text))


def _thing_priced(found: re.Match[str]) -> str:
    """The thing a price_of_thing match names: named (出張って), a cost (チケット代！), or a fare pointed at (電車賃…それ)."""
    return next(v for v in (found.group("thing"), found.group("cost"), found.group("fare")) if v is not None)


def amounts(text: str) -> list[int]:
    """Every sum of money `text` names, in order."""
    return [n for _, n in sorted(_named(nfkc(text)))]


def _named(normalised: str) -> list[tuple[int, int]]:
    named: list[tuple[int, int]] = []
    for large in money("large_amount").finditer(normalised):
        n = (number(large.group("n")) or 1) if large.group("n") else 1
        named.append((large.start(), n * (10000 if large.group("man") else 1000)))
    for written in money("kanji_amount").finditer(normalised):
        sum_of = number(written.group("n"))
        if sum_of and not any(start <= written.start() < start + 3 for start, _ in named):
            named = [(start, v) for start, v in named if not written.start() <= start < written.end()]
            named.append((written.start(), sum_of))
    for found in money("amount").finditer(normalised):
        digits = re.sub(r"\D", "", found.group(0))
        if digits and not any(start == found.start() for start, _ in named):
            named.append((found.start(), int(digits)))
    return named


def handed_amount(text: str) -> int | None:
    """The sum of money `text` hands over or names (「はい、3,000円」「一万円で」「5千円札で」), if it names one: the
    last one named, since a sum checked comes before the one handed (「1750円ね。じゃあ2000円で」) — not a sum
    asked back as change (「4000円。お釣り500円お願いします」)."""
    normalised = nfkc(text)
    named = [(start, n) for start, n in _named(normalised) if not _asked_back(normalised, start)]
    return max(named)[1] if named else None


def change_asked(text: str) -> int | None:
    """The sum `text` asks back as change (「釣り、八百円くれ」「おつり2000円ちょうだい」), if it names one."""
    normalised = nfkc(text)
    asked = [(start, n) for start, n in _named(normalised) if _asked_back(normalised, start)]
    return max(asked)[1] if asked else None


def keeps_change(text: str) -> bool:
    """Whether `text` leaves the change to the house (「釣りはいらねえ」「お釣りは取っといて」) — not where those words
    are only reported (「おつりいいよって言いたいけど…おつりちょうだい」: wished, then the change asked for)."""
    normalised = nfkc(text)
    return any(compiled("moves", "reported").match(normalised[found.end():]) is None
               for found in money("keep_change").finditer(normalised))


def _asked_back(normalised: str, start: int) -> bool:
    return money("change_asked").search(normalised[max(0, start - 12):start]) is not None
