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
from .ja.tokens import TAG, Token
from .lexicon import compiled
from .text import TextForms, nfkc, to_hiragana

# Particles that link a verb to its object or subject (one token, matched whole); no particle at all counts too
# (トイレ借りて).
_ARGUMENT_PARTICLE = compiled("interpretation", "argument_particle")
# A noun at least this near one of the intent's words in meaning is the intent's own thing.
ARGUMENT_COSINE = 0.35
# Least cosine for a word to be near another in meaning (a word to relate to an intent: related.py).
MEANING_THRESHOLD = 0.4


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
    if index is None or tokens[index].pos[:1] != (TAG.verb,) or index == 0:
        return None
    j = index - 1
    if tokens[j].pos[:1] == (TAG.particle,):
        if not _ARGUMENT_PARTICLE.fullmatch(tokens[j].surface):
            return None
        j -= 1
    if j < 0:
        return None
    # a noun with a suffix (充電 + 器) is one thing: the compound, read from its first noun
    end = j
    while j >= 0 and tokens[j].pos[:2] == (TAG.suffix, TAG.noun_like):
        j -= 1
    if j < 0:
        return None
    noun = tokens[j]
    if not noun.is_noun or noun.pos[1:2] in ((TAG.numeral,), (TAG.proper_noun,)) or noun.pos[:1] == (TAG.pronoun,):
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
    if index == 0 or TAG.may_count not in token.pos:
        return False
    before = tokens[index - 1]
    return before.pos[1:2] == (TAG.numeral,) and before.end == token.start


def compound_head(text: str, start: int, end: int) -> str | None:
    """The common noun glued after a word found at start..end of normalised `text`, which the word only
    modifies (猫 for 看板 in 看板猫, 番 for 店 in 店番): Japanese compounds are right-headed, so the compound is
    about its last noun (看板猫 is a cat, not a sign); None when the word is itself the compound's last noun."""
    tokens = analyse(text).tokens
    last = next((i for i, t in enumerate(tokens) if t.end == end and t.start >= start), None)
    if last is None or last + 1 >= len(tokens) or not tokens[last].is_noun:
        return None
    following = tokens[last + 1]
    if following.start == end and following.pos[:2] == (TAG.noun, TAG.common_noun) and \
            TAG.may_count not in following.pos and TAG.may_be_adverb not in following.pos and \
            tokens[last].pos[1:2] != (TAG.numeral,):
        return following.surface
    return None


def in_another_word(forms: TextForms, start: int, end: int, own_text: str) -> bool:
    """Whether a word hit of two or more characters only modifies the noun
    glued after it (看板猫, 看板娘, 写真写り): Japanese compounds are
    right-headed, so the compound is about its last noun.  Also a hit inside a
    longer token that is another word (赤字 for 赤, 手伝う for 手).  Compounds the
    topic's own texts use (`own_text`, folded: 看板メニュー in the menu's examples)
    keep their sense."""
    analysis = analyse(forms.nfkc)
    if not analysis.tokens:
        return False
    index = analysis.index_at(start)
    if index is None:
        return False
    token = analysis.tokens[index]
    if token.start < start or token.end > end:
        if token.start == start and token.pos[:1] == (TAG.verb,) and _TOPIC_TTE.match(forms.nfkc, end):
            return False              # 「曲ってある？」: the noun with the topic marker って, not 曲る
        inner = forms.folded[token.start:token.end]
        if inner in own_text:
            return False
        near = _near_in_meaning(token, forms.nfkc[start:end])
        if near is not None and (token.is_noun or end - start < 2):
            return not near          # 居酒屋 ~ 酒, 歌手 ~ 歌 keep their sense; 赤字 ~ 赤, 看板娘 ~ 看板 do not
        if end - start >= 2:
            return token.is_noun
        return _other_word(token, start, end, forms)
    last = analysis.index_at(end - 1)
    if last is None or last + 1 >= len(analysis.tokens):
        return False
    following = analysis.tokens[last + 1]
    if not following.is_noun or following.pos[1:2] in ((TAG.proper_noun,), (TAG.auxiliary_stem,)) or following.start != end:
        return False
    if TAG.may_describe in following.pos:
        return False          # 写真嫌い, 写真苦手: a liking said of the thing, which stays the topic
    if end - start < 2 or any(t.pos and t.pos[0] == TAG.suffix for t in (following,)):
        return False
    compound = forms.folded[start:following.end]
    return compound not in own_text


def _near_in_meaning(token: Token, word: str) -> bool | None:
    """Whether a longer token is near the listed word inside it in meaning;
    None when the word-meaning table does not know both."""
    table = word_meaning()
    if table is None:
        return None
    longer = next((f for f in (token.normalised, token.surface) if table.row(f) is not None), None)
    if longer is None or table.row(word) is None:
        return None
    return table.cosine(longer, word) >= MEANING_THRESHOLD


# A one-kanji noun with the colloquial topic marker って, then what is asked or said about it.
_TOPIC_TTE = compiled("interpretation", "topic_tte")


def _other_word(token: Token, start: int, end: int, forms: TextForms) -> bool:
    """Whether a one-character hit inside a longer token is another word:
    the head of a noun (赤 in 赤字; at the end it keeps its sense: 名曲), or
    part of a verb or adjective read otherwise (曲 in 曲がる, not 赤 in 赤い)."""
    if token.is_noun:
        return token.end > end
    if token.pos[:1] in ((TAG.verb,), (TAG.adjective,)) and token.start == start:
        if _TOPIC_TTE.match(forms.nfkc, end):
            return False              # 「曲ってある？」: the noun with the topic marker って, not 曲る
        alone = analyse(forms.nfkc[start:end]).tokens
        own = to_hiragana(alone[0].reading) if len(alone) == 1 else ""
        return bool(own) and not to_hiragana(token.reading).startswith(own)
    return False
