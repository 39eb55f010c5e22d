"""SudachiPy (with the small dictionary from the package index) as butai's analyser.

Split mode C (the longest units: 入り口, 血の池) so a token is a word an author
would list.  The dictionary is read on first use (about 0.1-0.2 s); analyses
are cached because a turn asks for the same text several times.
"""
from __future__ import annotations

import logging
import threading
from functools import lru_cache

from ...turn_record import AnalyserRecord
from .tokens import TAG, VERB, Analysis, Token

# The continuative form (a verb's stem: すすめ of すすめる) and the part of speech of a noun made of it.
_STEM = TAG.continuative
_COMMON_NOUN = (TAG.noun, TAG.common_noun, TAG.general)

_LOCK = threading.Lock()
_TOKENIZER = None
_MISSING = False


def _tokenizer():
    global _TOKENIZER, _MISSING
    if _TOKENIZER is None and not _MISSING:
        with _LOCK:
            if _TOKENIZER is None and not _MISSING:
                try:
                    from sudachipy import Dictionary, SplitMode
                    _TOKENIZER = Dictionary(dict="small").tokenizer(mode=SplitMode.C)
                except Exception as exc:  # not installed, or no dictionary: interpretation goes on without
                    _MISSING = True
                    # Said once, loudly: without it interpretation is surface matching only (docs/deploy.md).
                    logging.getLogger("butai.interpret").warning(
                        "Japanese analyser unavailable (%s: %s); interpretation falls back to surface matching",
                        type(exc).__name__, exc)
    return _TOKENIZER


def available() -> bool:
    return _tokenizer() is not None


@lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    tokenizer = _tokenizer()
    if tokenizer is None or not text:
        return Analysis(text, ())
    out = []
    with _LOCK:                      # a SudachiPy tokenizer is not safe to share between threads
        morphemes = tokenizer.tokenize(text)
        for m in morphemes:
            tags = m.part_of_speech()          # a new tuple on every call: read once
            pos = tuple([tag for tag in tags[:4] if tag != "*"])
            conjugation = tags[5]
            out.append(Token(m.surface(), m.dictionary_form(), m.normalized_form(), m.reading_form(), pos,
                             "" if conjugation == "*" else conjugation, m.begin(), m.end(), m.is_oov()))
    return Analysis(text, _honorific_nouns(out))


def _honorific_nouns(tokens: list[Token]) -> tuple[Token, ...]:
    """An honorific prefix before a verb's continuative form that a particle or a mark follows (お + すすめ +
    は): one noun (おすすめ, お休み), as a reader takes it, not a prefix and a verb (お待ち + ください stays a
    request)."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        verb = tokens[i + 1] if i + 1 < len(tokens) else None
        after = tokens[i + 2] if i + 2 < len(tokens) else None
        if token.is_prefix and verb is not None and verb.kind == VERB and verb.conjugation.startswith(_STEM) and \
                verb.start == token.end and \
                (after is None or after.is_mark or (after.is_particle and not after.is_conjunctive)):
            surface = token.surface + verb.surface
            out.append(Token(surface, surface, token.normalised + verb.surface, token.reading + verb.reading,
                             _COMMON_NOUN, "", token.start, verb.end, False, len(token.surface)))
            i += 2
            continue
        out.append(token)
        i += 1
    return tuple(out)


def record(text: str) -> AnalyserRecord | None:
    """The turn record's account of the analyser: its name and the words it read in ``text`` (normalised
    forms); None when it is unavailable and interpretation matched surfaces only (docs/deploy.md)."""
    if not available():
        return None
    return AnalyserRecord(name=SudachiAnalyser.name, dictionary="small",
                          words=[token.normalised for token in analyse(text).tokens])


class SudachiAnalyser:
    name = "sudachi"

    def analyse(self, text: str) -> Analysis:
        return analyse(text)
