"""A scenario's own phrases for going and leaving (``leave_phrases``, and a place's ``enter_phrases`` and
``leave_phrases``), matched on tokens.

Which words mean leaving depends on the world: 店を出る in a bar, 船を降りる
on a ship, 湯から上がる in a bath.  The author lists the phrase once in its dictionary form; it
matches the player's sentence when the phrase's words occur in a row (particles may be left out or put in:
外の空気吸ってきます says 外の空気を吸う) and only sentence-final matter follows the verb: a verb that carries
the act on after て (てみる, てくる, ちゃう: the lexicon's ``carrying_verbs``), 〜ます / 〜ましょう, final particles
(ね, よ, かな), punctuation.  So 店を出よう, お店を出ますね, 外に出てみます and ここを出るよ leave, while
店を出る前に, 店を出たら, 店を出ない, 店を出たよ, 外に出てみない？ do not.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from .ja import analyse
from .ja.tokens import TAG, Token
from .lexicon import compiled, word_class
from .text import nfkc

# After the phrase's verb, only these may follow for it to be said, not talked about (a lemma, matched whole).
_FINAL_AUXILIARY = compiled("interpretation", "final_auxiliary")
_NOT_SAID = (TAG.conditional, TAG.imperative, TAG.irrealis)


def _content(tokens: Sequence[Token]) -> list[int]:
    """Positions of the words that carry the phrase (particles and symbols may be left out or put in:
    外の空気を吸う ~ 外の空気吸う)."""
    return [i for i, t in enumerate(tokens) if t.pos[:1] not in ((TAG.particle,), (TAG.supplementary_symbol,))]


class SaidPhrases:
    def __init__(self, phrases: Iterable[str]) -> None:
        self.phrases = tuple(p for p in phrases if p.strip())
        compiled = []
        for phrase in self.phrases:
            tokens = analyse(nfkc(phrase)).tokens
            compiled.append([tokens[i].lemma for i in _content(tokens)])
        self._compiled = compiled
        self._carrying = frozenset(word_class("carrying_verbs").entries)

    def __bool__(self) -> bool:
        return bool(self.phrases)

    def said(self, text: str) -> bool:
        """Whether the sentence ends with one of the phrases, committed to."""
        if not self._compiled:
            return False
        tokens = list(analyse(nfkc(text)).tokens)
        content = _content(tokens)
        lemmas = [tokens[i].lemma for i in content]
        for phrase in self._compiled:
            n = len(phrase)
            if not n:
                continue
            for i in range(len(content) - n + 1):
                if lemmas[i:i + n] == phrase and self._committed(tokens, content[i + n - 1]):
                    return True
        return False

    def _committed(self, tokens: Sequence[Token], verb: int) -> bool:
        """The phrase's last word at `verb`, then only what commits to it: verbs that carry it on (after て,
        or ちゃう on its own), then 〜ます, final particles, punctuation."""
        at = verb
        while True:
            if at + 2 < len(tokens) and tokens[at + 1].pos[:2] == (TAG.particle, TAG.conjunctive_particle) and \
                    tokens[at + 2].lemma in self._carrying:
                at += 2
            elif at + 1 < len(tokens) and tokens[at + 1].lemma in self._carrying and \
                    tokens[at + 1].pos[:1] in ((TAG.verb,), (TAG.auxiliary,)):
                at += 1
            else:
                break
        if tokens[at].conjugation.startswith(_NOT_SAID):
            return False
        return all(_final(t) for t in tokens[at + 1:])


def _final(token: Token) -> bool:
    top = token.pos[:1]
    if top == (TAG.supplementary_symbol,) or token.pos[:2] == (TAG.particle, TAG.final_particle):
        return True
    return top == (TAG.auxiliary,) and bool(_FINAL_AUXILIARY.fullmatch(token.lemma))
