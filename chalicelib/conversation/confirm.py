"""A question that only takes back a fact just said: 「三十年も？」「このお店を三十年？」 right after ママ said
「もう三十年になるわね」 asks whether that is so — the answer is that fact again (the recall), not a line of
some entry sharing a word, nor an unsure 「考えたこともなかったわ」.

Read on the analyser's tokens (no model): the question asks no wh-word, ends on a noun phrase (before も, って,
ですか…), and that phrase was said in the last line — holding a number (三十年, 九十) or asked with も
(「別府まで？」 is not enough: a bare noun may be an order or a new topic).
"""
from __future__ import annotations

import re
from functools import cache

from ..interpret.asking import is_question
from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG
from ..interpret.lexicon import compiled, mapping
from ..interpret.text import nfkc

_WH = compiled("conversation", "confirm_wh")
_END = compiled("conversation", "confirm_end")
_TAIL = compiled("conversation", "confirm_tail")
# 「三十年も？」: asked back with も
_ALSO_END = compiled("conversation", "confirm_also_end")


@cache
def _numerals() -> tuple[dict[int, str], tuple[tuple[int, str], ...]]:
    """The kanji of the digits (1 → 一) and of the units, largest first (1000 → 千, 100 → 百, 10 → 十)."""
    digits = {int(n): kanji for n, kanji in mapping("conversation", "confirm_kanji_digits").items()}
    units = mapping("conversation", "confirm_kanji_units").items()
    return digits, tuple(sorted(((int(n), kanji) for n, kanji in units), reverse=True))


def kanji_number(text: str) -> str:
    """Arabic numbers (30年) written as kanji numerals (三十年), as lines are authored."""
    digits, units = _numerals()

    def one(match: re.Match) -> str:
        n = int(match.group(0))
        if n == 0 or n >= 10000:
            return match.group(0)
        out = ""
        for value, unit in units:
            q, n = divmod(n, value)
            if q:
                out += ("" if q == 1 else digits[q]) + unit
        return out + (digits[n] if n else "")
    return re.sub(r"\d+", one, text)


def confirmed_phrase(text: str, said: str) -> str | None:
    """The phrase of `said` (the last line) that the question `text` only asks back, or None."""
    line = kanji_number(nfkc(text).strip())
    if len(line) > 30 or not is_question(line) or _WH.search(line):
        return None
    body = _END.sub("", line)
    also = bool(_ALSO_END.search(body))
    body = _TAIL.sub("", body)
    tokens = analyse(body).tokens
    i = len(tokens)
    while i > 0 and tokens[i - 1].pos[:1] in ((TAG.noun,), (TAG.suffix,)):     # (a numeral is a noun here)
        i -= 1
    if i == len(tokens):
        return None
    phrase = body[tokens[i].start:]
    numbered = any(t.pos[1:2] == (TAG.numeral,) for t in tokens[i:])
    if len(phrase) < 2 or not (numbered or also) or phrase not in kanji_number(nfkc(said)):
        return None
    return phrase
