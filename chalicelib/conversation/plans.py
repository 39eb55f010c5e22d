"""Whether a question put to a character asks their plans or their view — what an honest "not decided yet"
answers (their `unsure` lines: 「それはまだ決めてないんだ」) — or whether they know or remember something
(「ラ・ラ・ランド知ってる？」「ママも覚えてるだろ？」), which their 質問 reaction answers honestly (「うーん、それは
知らないなあ」「さあ、どうだったかしら」): 「まだ考え中です」 to 「おじいさまのこと覚えていますか」 answers a question
nobody asked.  The cue words are the lexicon table plans.json (`knows_or_remembers`)."""
from __future__ import annotations

from ..interpret.lexicon import compiled
from ..interpret.text import nfkc


def asks_if_known(sentence: str) -> bool:
    """Whether the sentence that asks (its text) asks whether the one asked knows or remembers something."""
    return bool(compiled("plans", "knows_or_remembers").search(nfkc(sentence)))
