"""Intents related to the player's words by meaning, not spelling.

Word narrowing keeps an intent only when one of its listed words occurs in
the input; a player who says ジンジャーエール, 口コミ or 外観 names the menu,
advertising or the door without any listed word.  `IntentMeaning` relates the
input's content words (from the analyser) to each intent's anchors: its
listed words and the content words of its examples and description.

Safeguards:
- only intents: moves and 離脱 never come from meaning;
- an anchor shared by several intents (店, 思う) is no anchor;
- a player's word counts only when it is clearly nearer one intent than any
  other (by ``margin``), and only at ``threshold`` or above;
- names of the scenario's characters and places are not topic words;
- meaning is only for texts where no intent's listed word occurs at all: a
  listed word of an intent the state does not offer (おつまみ at the start,
  before the menu is a topic) means the player is on that topic, not on a
  weaker neighbour of it.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..scenario.inputs import PlayerInput
from .ja import analyse, word_meaning
from .ja.meaning import MeaningIndex
from .ja.tokens import TAG, Token
from .lexicon import compiled
from .senses import MEANING_THRESHOLD, is_counted_quantity
from .text import make_matcher, nfkc

THRESHOLD = MEANING_THRESHOLD          # least cosine for a word to relate to an intent
# A verb or adjective has many senses (聞く: a sound, a question, advice): it relates by meaning only
# when clearly near (つまめる ~ つまみ 0.57), not at the noun's threshold (聞く ~ 曲 0.42).
PREDICATE_THRESHOLD = 0.5
HEAD_COSINE = 0.5        # a word that ends two or more of an intent's listed phrases (まま): a weaker listed word
MARGIN = 0.08            # ... and its lead over the next intent for that word
SHARED_ANCHOR = 3        # an anchor found in this many intents says nothing


@dataclass(frozen=True)
class Match:
    intent: str          # "意図:X"
    cosine: float
    word: str            # the player's word
    anchor: str          # the intent's word it is near
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {"intent": self.intent, "cosine": round(self.cosine, 3), "word": self.word, "anchor": self.anchor}


def _phrase_heads(words: Iterable[str]) -> list[str]:
    """Content words that end two or more of the listed phrases (今のまま,
    このまま, そのまま → まま): the phrases' common core, which the player may
    say with another modifier (昔のまま, あのまま).  One phrase's head alone
    says too little (の先 of この先)."""
    counts: dict[str, int] = {}
    for word in words:
        tokens = [t for t in analyse(nfkc(word)).tokens if t.pos[:1] != (TAG.supplementary_symbol,)]
        if len(tokens) >= 2 and tokens[-1].is_content:
            counts[tokens[-1].normalised] = counts.get(tokens[-1].normalised, 0) + 1
    return [w for w, n in counts.items() if n >= 2]


def _anchor_words(texts: Iterable[str]) -> list[str]:
    """The normalised forms of listed words that are one whole word
    (食べ → 食べる, 入口 → 入り口); a phrase or a stem cut before a negation
    (今のまま, 変えな) gives no anchor: its parts do not mean what it means."""
    out = []
    for text in texts:
        tokens = analyse(nfkc(text)).tokens
        if len(tokens) == 1 and tokens[0].is_content:
            out.append(tokens[0].normalised)
    return out


_NUMERALS = compiled("interpretation", "numeral")


def _other_number(word: str, anchor: str) -> bool:
    """一人 and 二人 are near in meaning but not the same thing: words that differ only in a numeral."""
    a, b = _NUMERALS.sub("", nfkc(word)), _NUMERALS.sub("", nfkc(anchor))
    return a == b and nfkc(word) != nfkc(anchor) and bool(_NUMERALS.search(word)) and bool(_NUMERALS.search(anchor))


class IntentMeaning:
    def __init__(self, index: MeaningIndex | None, names: Iterable[str] = (), *, threshold: float = THRESHOLD,
                 margin: float = MARGIN, listed: Iterable[str] = (), heads: dict[str, str] | None = None) -> None:
        self.index = index
        self.heads = dict(heads or {})      # normalised head word → intent
        self.listed = tuple(w for w in listed if w.strip())
        self._matcher = make_matcher(True)
        self.names = {nfkc(n) for n in names if n}
        self.threshold = threshold
        self.margin = margin
        self._cache: dict[str, tuple[Match, ...]] = {}

    @classmethod
    def of(cls, scenario: Any, **settings: Any) -> IntentMeaning:
        table = word_meaning()
        heads = cls.phrase_heads(scenario)
        names = [pid for pid in scenario.places] + [a for p in scenario.places.values() for a in p.aliases]
        for cid, character in scenario.characters.items():
            names += [cid, character.name, *character.aliases]
        if table is None:
            return cls(None, names, heads=heads, **settings)
        raw: dict[str, list[str]] = {}
        for intent in scenario.intents.values():
            if not intent.words:
                continue            # not narrowed, so nothing to rescue; its similarity scoring stays as it is
            # The author's words only: examples and descriptions are full of words every topic uses
            # (話す, 思う, 前), and a description's 映画音楽 would make 映画 mean music.
            listed = list(intent.words)
            words = [nfkc(w) for w in listed] + _anchor_words(listed)
            raw[str(PlayerInput.intent(intent.id))] = list(dict.fromkeys(words))
        counts: dict[str, int] = {}
        for words in raw.values():
            for w in set(words):
                counts[w] = counts.get(w, 0) + 1
        listed = [w for intent in scenario.intents.values() for w in intent.words]
        name_set = {nfkc(n) for n in names}
        anchors = {label: [w for w in words if counts[w] < SHARED_ANCHOR and w not in name_set]
                   for label, words in raw.items()}
        return cls(MeaningIndex(table, anchors), names, listed=listed, heads=heads, **settings)

    @staticmethod
    def phrase_heads(scenario: Any) -> dict[str, str]:
        """Head word → "意図:X", for heads that one intent's phrases share and
        no other intent lists or shares."""
        found: dict[str, list[str]] = {}
        listed: set[str] = set()
        for intent in scenario.intents.values():
            listed |= {nfkc(w) for w in intent.words}
            for head in _phrase_heads(intent.words):
                found.setdefault(head, []).append(str(PlayerInput.intent(intent.id)))
        return {head: labels[0] for head, labels in found.items() if len(labels) == 1 and head not in listed}

    @property
    def available(self) -> bool:
        return self.index is not None or bool(self.heads)

    def _units(self, tokens: tuple[Token, ...]) -> list[Token]:
        """Content tokens, with runs of nouns also tried as one word
        (ジンジャー + エール → ジンジャーエール): the longer unit first."""
        out: list[Token] = []
        i = 0
        while i < len(tokens):
            j = i
            while j < len(tokens) and tokens[j].is_noun and tokens[j].pos[1:2] != (TAG.proper_noun,):
                j += 1
            if j - i >= 2:
                run = tokens[i:j]
                surface = "".join(t.surface for t in run)
                out.append(Token(surface, surface, surface, "", (TAG.noun,), "", run[0].start, run[-1].end))
            i = max(j, i + 1) if j > i else i + 1
        out.extend(t for i, t in enumerate(tokens) if t.is_content and not is_counted_quantity(tokens, i))
        return out

    def matches(self, text: str) -> tuple[Match, ...]:
        """Per intent, the best word that relates to it (best first)."""
        if self.index is None and not self.heads:
            return ()
        found = self._cache.get(text)
        if found is not None:
            return found
        if self.listed and self._matcher.allows(text, self.listed):
            self._cache[text] = ()
            return ()
        analysis = analyse(nfkc(text))
        best: dict[str, Match] = {}
        covered: list[tuple[int, int]] = []
        for token in self._units(analysis.tokens):
            if nfkc(token.surface) in self.names or token.normalised in self.names:
                continue
            if any(a <= token.start and token.end <= b for a, b in covered):
                continue            # part of a longer unit that already related
            head = self.heads.get(token.normalised)
            if head is not None:
                covered.append((token.start, token.end))
                if head not in best or HEAD_COSINE > best[head].cosine:
                    best[head] = Match(head, HEAD_COSINE, token.surface, token.normalised, token.start, token.end)
                continue
            if self.index is None:
                continue
            related = {label: found for label, found in self.index.token_related(token).items()
                       if not _other_number(token.surface, found.anchor)}
            if not related:
                continue
            ranked = sorted(related.items(), key=lambda kv: kv[1].cosine, reverse=True)
            label, top = ranked[0]
            second = ranked[1][1].cosine if len(ranked) > 1 else 0.0
            # a verb, an adjective or a one-character word has many senses: it needs to be clearly near
            short = len(token.surface) == 1
            threshold = self.threshold if token.pos[:1] not in ((TAG.verb,), (TAG.adjective,)) and not short else \
                max(self.threshold, PREDICATE_THRESHOLD)
            if top.cosine < threshold or top.cosine - second < self.margin:
                continue
            covered.append((token.start, token.end))
            if label not in best or top.cosine > best[label].cosine:
                best[label] = Match(label, top.cosine, top.word, top.anchor, top.start, top.end)
        found = tuple(sorted(best.values(), key=lambda m: m.cosine, reverse=True))
        if len(self._cache) > 2048:
            self._cache.clear()
        self._cache[text] = found
        return found

    def cosine(self, text: str, intent: str) -> float:
        for m in self.matches(text):
            if m.intent == intent:
                return m.cosine
        return 0.0
