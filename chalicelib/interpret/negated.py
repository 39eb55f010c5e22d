"""Listed words that name a verb's negation, matched on tokens.

An author lists 「変えな」「変えず」「変わらな」 to mean "not changing"; as
strings they miss the player's other negated forms of the same verb:
変わらずに, 変わりません, 変えないで, 変わってない.  The analyser gives the
verb's normalised form and the auxiliaries after it, so such a word matches
any negation of its verb — but not an obligation (変えなきゃ, 変えなくちゃ,
変えなければ, 変えないと: "must change" is the opposite).
"""
from __future__ import annotations

from functools import lru_cache

from .. import lazyre
from .ja import analyse
from .ja.tokens import Token
from .lexicon import compiled

_NEGATION = ("ない", "ず", "ぬ")
# What may stand between the verb and its negation: 変わりません, 変わってない, 変えたくない.
_BETWEEN = {("助動詞", "ます"), ("助動詞", "たい"), ("助動詞", "てる"), ("助詞", "て"), ("動詞", "いる"), ("動詞", "居る"),
            ("形容詞", "ほしい"), ("形容詞", "欲しい")}
_MAX_BETWEEN = 3


def _is_negation(token: Token) -> bool:
    if token.pos[:1] == ("助動詞",):
        return token.lemma in _NEGATION
    return token.pos[:1] == ("形容詞",) and token.lemma == "ない"      # 変えたくない, 変えてほしくない


@lru_cache(maxsize=512)
def negated_verb(word: str) -> str | None:
    """The normalised form of the verb a listed word negates (変えな → 変える,
    変えず → 変える), or None when the word is not a verb's negation."""
    if len(word) < 2 or word[-1] not in "なず":
        return None
    text = word + "い" if word.endswith("な") else word
    tokens = [t for t in analyse(text).tokens]
    if len(tokens) != 2:
        return None
    verb, negation = tokens
    if verb.pos[:1] != ("動詞",) or not verb.conjugation.startswith("未然形") or not _is_negation(negation):
        return None
    return verb.normalised


def _obligation(tokens: tuple[Token, ...], after: int) -> bool:
    """変えなきゃ, 変えなければ (仮定形), 変えなくちゃ, 変えなくては, 変えないと: "must"."""
    negation = tokens[after - 1]
    if negation.conjugation.startswith("仮定形"):
        return True
    rest = tokens[after:after + 2]
    if not rest:
        return False
    first = rest[0]
    if first.lemma in ("ちゃ", "きゃ", "ちゃう"):
        return True
    if first.lemma == "と":            # 変えないと (…いけない), not 変えないと思う
        return len(rest) < 2 or rest[1].normalised not in ("思う", "言う")
    return first.lemma == "て" and len(rest) > 1 and rest[1].lemma == "は"


def negation_spans(text: str, verb: str) -> list[tuple[int, int]]:
    """Spans of `text` (normalised) where `verb` (a normalised form) is negated."""
    tokens = analyse(text).tokens
    out = []
    for i, token in enumerate(tokens):
        if token.pos[:1] != ("動詞",) or token.normalised != verb:
            continue
        for j in range(i + 1, min(len(tokens), i + 2 + _MAX_BETWEEN)):
            following = tokens[j]
            if _is_negation(following):
                if not _obligation(tokens, j + 1):
                    out.append((token.start, following.end))
                break
            if (following.pos[0] if following.pos else "", following.lemma) not in _BETWEEN:
                break
    return out


# What was said is denied after the words that report it: 「混ぜてもいいなんて言ってないよ」「認めてくれなかった」
# 「許してもらえなかった」 — the entry those words name (ママ gave in) is the opposite of what is told.
_DENIED = lazyre.compile(r"^[^。！？!?]{0,12}?(?:なんて|とは|なんか|って)?(?:一言も|全然|まだ|別に)?"
                     r"(?:言って|言われて|聞いて|言っ)(?:は|も)?(?:い)?(?:ない|なかった|ません|ねえ|ねー)"
                     r"(?!っけ|[？?]|かな|の[？?]|か)")
# ... or the verb the words end on is itself negated (認めてない, 許してくれなかった) — not a noun with ない (お金ない)
_VERB_DENIED = lazyre.compile(r"^(?:て|で)?(?:は|も)?(?:くれ|もらえ|くれて|もらって)?(?:い)?(?:ない|なかった|ません|ず)(?![？?]|かな|の[？?]|か)")


def denied_after(text: str, end: int) -> bool:
    """Whether the words ending at `end` of `text` (normalised) are denied by what follows them in their
    sentence (not said, not granted), rather than told."""
    rest = text[end:]
    if _DENIED.search(rest):
        return True
    verb_ending = (end > 0 and text[end - 1] in "てでっ") or rest.startswith(("て", "で", "くれ", "もらえ"))
    return verb_ending and bool(_VERB_DENIED.search(rest))


def declined_after(text: str, end: int) -> bool:
    """Whether the thing named just before `end` of `text` (normalised) is declined right there, for oneself
    (「花束はいらない」, lexicon undone.declined_thing): neither asked about nor wanted."""
    return bool(compiled("undone", "declined_thing").match(text[end:]))
