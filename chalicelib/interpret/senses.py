"""Whether a listed word is used in its intent's sense, read on the analyser's tokens.

A topic's listed verb (借りる, 流す, かける, 撮る) says little on its own: what
it is done *to* decides the sense.  「前に借りたお金」 is the debt; 「トイレ
借りてもいい？」「傘借りてもいい？」 borrow something else.  So a listed verb
whose object (the noun before it, with を/が/は/も/って or no particle) is a
content noun that the intent never uses — not one of its words, not in its
examples or description, not near its words in meaning — is read in another
sense, like a word inside a foreign compound.

A counter after a numeral (二階, 三杯, 十年) is a quantity, not a topic word:
meaning matching skips it (階 is near 入り口 in meaning; 二階 is not the door).
"""
from __future__ import annotations

from collections.abc import Iterable

from .ja import analyse, word_meaning
from .ja.tokens import Token
from .text import nfkc, to_hiragana

# Particles that link a verb to its object or subject; no particle at all counts too (トイレ借りて).
_ARGUMENT_PARTICLES = ("を", "が", "は", "も", "って")
# A noun at least this near one of the intent's words in meaning is the intent's own thing.
ARGUMENT_COSINE = 0.35


def token_at(tokens: tuple[Token, ...], start: int) -> int | None:
    for i, token in enumerate(tokens):
        if token.start <= start < token.end:
            return i
    return None


def verb_argument(text: str, start: int) -> Token | None:
    """The noun a verb starting at `start` takes as its object or subject, when the sentence says one
    right before it: 「トイレ借りて」→ トイレ, 「お金を借りた」→ お金; None when there is none."""
    tokens = analyse(text).tokens
    index = token_at(tokens, start)
    if index is None or tokens[index].pos[:1] != ("動詞",) or index == 0:
        return None
    j = index - 1
    if tokens[j].pos[:1] == ("助詞",):
        if tokens[j].surface not in _ARGUMENT_PARTICLES:
            return None
        j -= 1
    if j < 0:
        return None
    # a noun with a suffix (充電 + 器) is one thing: the compound, read from its first noun
    end = j
    while j >= 0 and tokens[j].pos[:2] == ("接尾辞", "名詞的"):
        j -= 1
    if j < 0:
        return None
    noun = tokens[j]
    if not noun.is_noun or noun.pos[1:2] in (("数詞",), ("固有名詞",)) or noun.pos[:1] == ("代名詞",):
        return None
    if end > j:
        surface = "".join(t.surface for t in tokens[j:end + 1])
        return Token(surface, surface, surface, "", noun.pos, "", noun.start, tokens[end].end)
    return noun


def known_to_intent(noun: Token, words: Iterable[str], own_text: str) -> bool:
    """Whether a noun is the intent's own: a listed word, a word of its examples or description (`own_text`,
    folded to hiragana), or near one of its listed words in meaning."""
    forms = {noun.surface, noun.normalised, noun.lemma} - {""}
    listed = [w for w in words if w]
    if any(f in listed or to_hiragana(nfkc(f)) in own_text for f in forms):
        return True
    if any(w and w in noun.surface for w in listed):
        return True
    table = word_meaning()
    if table is None:
        return True          # without the table nothing can be told apart: keep the word's sense
    for word in listed:
        for form in forms:
            if table.cosine(form, word) >= ARGUMENT_COSINE:
                return True
    return False


def verb_for_something_else(text: str, start: int, words: Iterable[str], own_text: str) -> bool:
    """A listed verb at `start` done to something the intent never speaks of (トイレ借りて for the debt)."""
    noun = verb_argument(text, start)
    return noun is not None and not known_to_intent(noun, words, own_text)


def is_counted_quantity(tokens: tuple[Token, ...], index: int) -> bool:
    """A counter noun right after a numeral (二階, 三杯, 十年): a quantity, not a topic word."""
    token = tokens[index]
    if index == 0 or "助数詞可能" not in token.pos:
        return False
    before = tokens[index - 1]
    return before.pos[1:2] == ("数詞",) and before.end == token.start


def compound_head(text: str, start: int, end: int) -> str | None:
    """The common noun glued after a word found at start..end of normalised `text`, which the word only
    modifies (猫 for 看板 in 看板猫, 番 for 店 in 店番): Japanese compounds are right-headed, so the compound is
    about its last noun (看板猫 is a cat, not a sign); None when the word is itself the compound's last noun."""
    tokens = analyse(text).tokens
    last = next((i for i, t in enumerate(tokens) if t.end == end and t.start >= start), None)
    if last is None or last + 1 >= len(tokens) or not tokens[last].is_noun:
        return None
    following = tokens[last + 1]
    if following.start == end and following.pos[:2] == ("名詞", "普通名詞") and \
            "助数詞可能" not in following.pos and "副詞可能" not in following.pos and \
            tokens[last].pos[1:2] != ("数詞",):
        return following.surface
    return None
