"""A scenario's own phrases for going and leaving (``leave_phrases``, and a place's ``enter_phrases`` and
``leave_phrases``), matched on tokens.

Which words mean leaving depends on the world: 店を出る in a bar, 船を降りる
on a ship, 湯から上がる in a bath.  The author lists the phrase once in its dictionary form; it
matches the player's sentence when the phrase's lemmas occur in a row and
only sentence-final matter follows the verb: 〜ます / 〜ましょう, final
particles (ね, よ, かな), punctuation.  So 店を出よう, お店を出ますね and
ここを出るよ leave, while 店を出る前に, 店を出たら, 店を出ない, 店を出たよ do not.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from .ja import analyse
from .ja.tokens import Token
from .text import nfkc

# After the phrase's verb, only these may follow for it to be said, not talked about.
_FINAL_AUXILIARIES = {"ます"}
_NOT_SAID = ("仮定形", "命令形")


def _lemmas(tokens: Sequence[Token]) -> list[str]:
    return [t.lemma for t in tokens if t.pos[:1] != ("補助記号",)]


class SaidPhrases:
    def __init__(self, phrases: Iterable[str]) -> None:
        self.phrases = tuple(p for p in phrases if p.strip())
        self._compiled = [_lemmas(analyse(nfkc(p)).tokens) for p in self.phrases]

    def __bool__(self) -> bool:
        return bool(self.phrases)

    def said(self, text: str) -> bool:
        """Whether the sentence ends with one of the phrases, committed to."""
        if not self._compiled:
            return False
        tokens = [t for t in analyse(nfkc(text)).tokens]
        lemmas = [t.lemma for t in tokens]
        for phrase in self._compiled:
            n = len(phrase)
            if not n:
                continue
            for i in range(len(tokens) - n + 1):
                if lemmas[i:i + n] != phrase:
                    continue
                verb = tokens[i + n - 1]
                if verb.conjugation.startswith(_NOT_SAID) or verb.conjugation.startswith("未然形"):
                    continue
                if all(_final(t) for t in tokens[i + n:]):
                    return True
        return False


def _final(token: Token) -> bool:
    top = token.pos[:1]
    if top == ("補助記号",) or token.pos[:2] == ("助詞", "終助詞"):
        return True
    return top == ("助動詞",) and token.lemma in _FINAL_AUXILIARIES
