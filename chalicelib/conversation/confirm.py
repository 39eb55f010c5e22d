"""A question that only takes back a fact just said: 「三十年も？」「このお店を三十年？」 right after ママ said
「もう三十年になるわね」 asks whether that is so — the answer is that fact again (the recall), not a line of
some entry sharing a word, nor an unsure 「考えたこともなかったわ」.

Read on the analyser's tokens (no model): the question asks no wh-word, ends on a noun phrase (before も, って,
ですか…), and that phrase was said in the last line — holding a number (三十年, 九十) or asked with も
(「別府まで？」 is not enough: a bare noun may be an order or a new topic).
"""
from __future__ import annotations

import re

from .. import lazyre
from ..interpret.asking import is_question
from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG
from ..interpret.text import nfkc

_WH = lazyre.compile(r"誰|だれ|何|なに|なん(?!です|だ)|どこ|いつ|いくら|なぜ|なんで|どうして|どう|どんな|どれ|どっち|どちら|幾")
_END = lazyre.compile(r"[?？!！。…‥、,\s~〜ー]+$")
_TAIL = lazyre.compile(r"(?:なんですか|なんですって|なんだ|なの|ですか|ですって|だって|って|なんて|も|か|ね|よね)$")
_DIGITS = "〇一二三四五六七八九"


def kanji_number(text: str) -> str:
    """Arabic numbers (30年) written as kanji numerals (三十年), as lines are authored."""
    def one(match: re.Match) -> str:
        n = int(match.group(0))
        if n == 0 or n >= 10000:
            return match.group(0)
        out = ""
        for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
            q, n = divmod(n, value)
            if q:
                out += ("" if q == 1 else _DIGITS[q]) + unit
        return out + (_DIGITS[n] if n else "")
    return re.sub(r"\d+", one, text)


def confirmed_phrase(text: str, said: str) -> str | None:
    """The phrase of `said` (the last line) that the question `text` only asks back, or None."""
    line = kanji_number(nfkc(text).strip())
    if len(line) > 30 or not is_question(line) or _WH.search(line):
        return None
    body = _END.sub("", line)
    also = body.endswith("も")
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
