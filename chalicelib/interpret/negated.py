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

from .ja import analyse
from .ja.tokens import TAG, Token
from .lexicon import compiled, mapping

_NEGATION = compiled("reading", "negation")
_NEGATION_ADJECTIVE = compiled("reading", "negation_adjective")
# What may stand between the verb and its negation: 変わりません, 変わってない, 変えたくない — each word's group in
# the pattern, and the part of speech the analyser gives that group's words.
_BETWEEN = compiled("reading", "between_verb_and_negation")
_BETWEEN_POS = {"auxiliary": TAG.auxiliary, "particle": TAG.particle, "verb": TAG.verb, "adjective": TAG.adjective}
_MAX_BETWEEN = 3
# A listed word that ends where a verb's negation is cut off (変えな, 変えず), and the cut ending read whole (な → ない).
_NEGATION_CUT = compiled("reading", "negation_cut")
_NEGATION_COMPLETED = mapping("reading", "negation_completed")


def _is_negation(token: Token) -> bool:
    if token.pos[:1] == (TAG.auxiliary,):
        return _NEGATION.fullmatch(token.lemma) is not None
    # 変えたくない, 変えてほしくない
    return token.pos[:1] == (TAG.adjective,) and _NEGATION_ADJECTIVE.fullmatch(token.lemma) is not None


def _between(token: Token) -> bool:
    """Whether the token may stand between a verb and its negation (its part of speech and its lemma)."""
    found = _BETWEEN.fullmatch(token.lemma)
    return found is not None and _BETWEEN_POS[found.lastgroup or ""] == (token.pos[0] if token.pos else "")


@lru_cache(maxsize=512)
def negated_verb(word: str) -> str | None:
    """The normalised form of the verb a listed word negates (変えな → 変える,
    変えず → 変える), or None when the word is not a verb's negation."""
    if len(word) < 2 or not _NEGATION_CUT.search(word):
        return None
    text = word[:-1] + _NEGATION_COMPLETED[word[-1]] if word[-1] in _NEGATION_COMPLETED else word
    tokens = [t for t in analyse(text).tokens]
    if len(tokens) != 2:
        return None
    verb, negation = tokens
    if verb.pos[:1] != (TAG.verb,) or not verb.conjugation.startswith(TAG.irrealis) or not _is_negation(negation):
        return None
    return verb.normalised


# The words after a negation that make it "must" (lemmas): 変えなくちゃ / 変えなきゃ, 変えないと, 変えなくては;
# and the verbs after 〜ないと that make it a thought or a report instead (変えないと思う).
_OBLIGATION_CONTRACTED = compiled("reading", "obligation_contracted")
_OBLIGATION_TO = compiled("reading", "obligation_to")
_THOUGHT_OR_SAID = compiled("reading", "thought_or_said")
_OBLIGATION_TE = compiled("reading", "obligation_te")
_OBLIGATION_WA = compiled("reading", "obligation_wa")


def _obligation(tokens: tuple[Token, ...], after: int) -> bool:
    """変えなきゃ, 変えなければ (仮定形), 変えなくちゃ, 変えなくては, 変えないと: "must"."""
    negation = tokens[after - 1]
    if negation.conjugation.startswith(TAG.conditional):
        return True
    rest = tokens[after:after + 2]
    if not rest:
        return False
    first = rest[0]
    if _OBLIGATION_CONTRACTED.fullmatch(first.lemma):
        return True
    if _OBLIGATION_TO.fullmatch(first.lemma):            # 変えないと (…いけない), not 変えないと思う
        return len(rest) < 2 or _THOUGHT_OR_SAID.fullmatch(rest[1].normalised) is None
    return _OBLIGATION_TE.fullmatch(first.lemma) is not None and len(rest) > 1 and \
        _OBLIGATION_WA.fullmatch(rest[1].lemma) is not None


def negation_spans(text: str, verb: str) -> list[tuple[int, int]]:
    """Spans of `text` (normalised) where `verb` (a normalised form) is negated."""
    tokens = analyse(text).tokens
    out = []
    for i, token in enumerate(tokens):
        if token.pos[:1] != (TAG.verb,) or token.normalised != verb:
            continue
        for j in range(i + 1, min(len(tokens), i + 2 + _MAX_BETWEEN)):
            following = tokens[j]
            if _is_negation(following):
                if not _obligation(tokens, j + 1):
                    out.append((token.start, following.end))
                break
            if not _between(following):
                break
    return out


# What was said is denied after the words that report it: 「混ぜてもいいなんて言ってないよ」「認めてくれなかった」
# 「許してもらえなかった」 — the entry those words name (ママ gave in) is the opposite of what is told.
_DENIED = compiled("reading", "denied_report")
# ... or the verb the words end on is itself negated (認めてない, 許してくれなかった) — not a noun with ない (お金ない)
_VERB_DENIED = compiled("reading", "verb_denied")
# the words end on a verb's te-form (認めて, 頼んで, 言っ), or the rest starts with one or with what is asked of another
_TE_FORM_END = compiled("reading", "te_form_end")
_VERB_ENDING_AFTER = compiled("reading", "verb_ending_after")


def denied_after(text: str, end: int) -> bool:
    """Whether the words ending at `end` of `text` (normalised) are denied by what follows them in their
    sentence (not said, not granted), rather than told."""
    rest = text[end:]
    if _DENIED.search(rest):
        return True
    verb_ending = (end > 0 and _TE_FORM_END.fullmatch(text[end - 1]) is not None) or \
        _VERB_ENDING_AFTER.match(rest) is not None
    return verb_ending and bool(_VERB_DENIED.search(rest))


def declined_after(text: str, end: int) -> bool:
    """Whether the thing named just before `end` of `text` (normalised) is declined right there, for oneself
    (「花束はいらない」, lexicon undone.declined_thing): neither asked about nor wanted."""
    return bool(compiled("undone", "declined_thing").match(text[end:]))
