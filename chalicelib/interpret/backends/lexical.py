"""`lexical`: the embedded default backend, no model, pure Python.

Each intent option is scored against the input from two kinds of evidence:

- **words**: the option's narrowing words found in the input (variant
  aware).  A one-character word inside a longer compound that the intent's
  own texts do not contain (味 in 味方, 歌 in 歌舞伎) counts little, and so
  does a word in a clause the player sets aside (「音楽より、…」「看板も
  いいけど、…」).
- **similarity**: the content n-grams (character bigrams and trigrams that
  hold a kanji, katakana, latin letter or digit, compared in folded form)
  the input shares with the option's examples and description, each weighted
  by how specific it is to that intent among the scenario's intents (IDF).

Moves and 離脱 are not guessed from similarity: a move needs a reachable
place named with a committing movement phrasing, 離脱 a farewell ending.

The best option wins when its score reaches ``threshold`` and leads the
next by ``margin``; otherwise the answer is none.  The defaults were
calibrated on the dev part of ``scenarios/eval/interpret.json``.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ... import lazyre
from ...scenario.inputs import NONE
from ..confidence import is_unsure
from ..cues import Place, SceneNames, clause_spans, explicit_moves, farewell
from ..ja import analyse
from ..ja.tokens import TAG
from ..lexicon import compiled
from ..options import NONE_ANSWER, ErrorKind, Interpretation, InterpretChoices, InterpretContext, Option
from ..owners import place_owned_words, said_of_person
from ..related import IntentMeaning
from ..senses import in_another_word, verb_for_something_else
from ..text import (
    TextForms,
    WordHit,
    WordMatcher,
    is_content_char,
    is_hiragana,
    is_kanji,
    is_katakana,
    make_matcher,
    nfkc,
    to_hiragana,
)
from .base import elapsed_ms

# Clauses the player sets aside: the topic named before these is not the point.
_CONTRAST = compiled("interpretation", "contrast")
_PARENS = lazyre.compile(r"[（(]([^）)]*)[）)]")


@dataclass(frozen=True)
class LexicalTuning:
    threshold: float = 0.55           # least score to choose an intent (just under one one-character word)
    margin: float = 0.1               # least lead over the runner-up ...
    confident: float = 1.0            # ... unless the best is at least this (two topics both named: the
                                      #     higher, and on a tie the one named last, wins)
    word_weight: float = 1.0          # a (multi-character) word hit
    short_word_weight: float = 0.6    # a one-character word hit
    compound_factor: float = 0.3      # one-character word inside a foreign compound
    contrast_factor: float = 0.45     # word in a clause set aside
    extra_word_bonus: float = 0.15    # each further distinct word of the same intent
    similarity_weight: float = 0.6    # weight of the n-gram similarity (0..1 after squashing)
    similarity_scale: float = 6.0     # IDF mass at which similarity reaches 1 - 1/e
    no_words_similarity_weight: float = 1.3   # an intent without words has only similarity to go on
    variant_factor: float = 0.85      # an inflected or re-scripted form rather than the listed spelling
    hiragana_factor: float = 0.8      # a word written in hiragana only (これから, かける): often another sense
    position_bonus: float = 0.05      # at most this for the topic named last
    no_anchor_factor: float = 0.3     # similarity kept when an intent without words misses its anchors
    background_weight: float = 1.0    # how much a background (lines, opinions) occurrence counts against a unit
    person_factor: float = 0.3        # a word about a person (お名前, 葵の名前, ママって名前): not the shop's
    meaning_weight: float = 1.45      # score of a word near an intent's words in meaning: weight × cosine
                                      #     (cosine 0.4 → 0.58, just over the threshold; a listed word scores 1.0)


def _ngrams(folded: str, original: str, sizes: Iterable[int] = (2, 3)) -> set[str]:
    units = set()
    length = len(folded)
    for n in sizes:
        for i in range(length - n + 1):
            if any(is_content_char(c) for c in original[i:i + n]):
                units.add(folded[i:i + n])
    return units


class _Profile:
    __slots__ = ("units", "text", "anchors")

    def __init__(self, option: Option) -> None:
        texts = [*option.examples, option.label, *_PARENS.findall(option.label)]
        self.text = to_hiragana(nfkc(" ".join(texts)))
        units: set[str] = set()
        for t in texts:
            n = nfkc(t)
            units |= _ngrams(to_hiragana(n), n)
        self.units = units
        # The intent's most characteristic content characters: those found in
        # the most of its own texts (店 for いい店とは), when in two or more.
        own = [nfkc(t) for t in (*option.examples, option.label)]
        counts: dict[str, int] = {}
        for t in own:
            for ch in set(t):
                if is_content_char(ch):
                    counts[ch] = counts.get(ch, 0) + 1
        top = max(counts.values(), default=0)
        self.anchors = frozenset(to_hiragana(c) for c, k in counts.items() if k == top) if top >= 2 else frozenset()


class LexicalBackend:
    name = "lexical"

    def __init__(self, tuning: LexicalTuning | None = None, *, matcher: WordMatcher | None = None,
                 variant_words: bool = True, **overrides: Any) -> None:
        base = tuning or LexicalTuning()
        if overrides:
            known = {k: v for k, v in overrides.items() if k in LexicalTuning.__dataclass_fields__}
            base = LexicalTuning(**{**base.__dict__, **{k: float(v) for k, v in known.items()}})
        self.tuning = base
        self.matcher = matcher or make_matcher(variant_words)
        self._profiles: dict[tuple, _Profile] = {}
        self._df: dict[str, int] = {}
        self._documents = 0
        self._seen: set[tuple] = set()
        self._background_df: dict[str, int] = {}
        self._background_documents = 0
        self.names: SceneNames | None = None
        self.meaning: IntentMeaning | None = None
        self._owned: dict[str, frozenset[str]] = {}
        self._other_sense = False

    # ---- preparation

    def prepare(self, scenario: Any) -> None:
        """Learn term specificity from all of a scenario's intents at once (the
        backend otherwise learns it from the options it is shown)."""
        from ...scenario import PlayerInput
        from ..options import Option as _Option
        self.names = SceneNames.of(scenario)
        self._owned = place_owned_words(scenario)
        if self.meaning is None:
            self.meaning = IntentMeaning.of(scenario)
        for intent in scenario.intents.values():
            self._profile(_Option("", PlayerInput.intent(intent.id), intent.description, tuple(intent.examples),
                                  tuple(intent.words)))
        # The rest of the scenario's text is the background: n-grams common in
        # its lines and opinions (思う, 好き) say little about the topic.
        background = [line.text for line in scenario.lines.values()]
        for character in scenario.characters.values():
            background.append(character.profile or "")
            background.extend(k.info for k in character.knowledge)
        for text in background:
            n = nfkc(text)
            self._background_documents += 1
            for unit in _ngrams(to_hiragana(n), n):
                self._background_df[unit] = self._background_df.get(unit, 0) + 1

    def _key(self, option: Option) -> tuple:
        return (str(option.input), option.label, option.examples, option.words)

    def _profile(self, option: Option) -> _Profile:
        key = self._key(option)
        profile = self._profiles.get(key)
        if profile is None:
            profile = _Profile(option)
            self._profiles[key] = profile
            if option.is_intent and str(option.input) not in self._seen:
                self._seen.add(str(option.input))  # type: ignore[arg-type]
                self._documents += 1
                for unit in profile.units:
                    self._df[unit] = self._df.get(unit, 0) + 1
        return profile

    def idf(self, unit: str) -> float:
        df = self._df.get(unit, 0)
        if df == 0:
            return 0.0
        documents = self._documents + self._background_documents
        return math.log(1.0 + documents / (df + self.tuning.background_weight * self._background_df.get(unit, 0)))

    # ---- scoring

    def _word_score(self, forms: TextForms, option: Option, profile: _Profile,
                    set_aside: list[tuple[int, int]], found: list[WordHit]) -> tuple[float, int]:
        """(score, position after the last counted hit)."""
        s = self.tuning
        best = 0.0
        last = 0
        distinct: set[str] = set()
        hits = other_sense = 0
        for hit in found:
            word = nfkc(hit.word)
            # what the player wrote decides: 扉 is one character, とびら three
            weight = s.word_weight if hit.end - hit.start >= 2 else s.short_word_weight
            if not hit.exact:
                weight *= s.variant_factor
            if all(is_hiragana(c) for c in word):
                weight *= s.hiragana_factor
            if _foreign_compound(forms, hit.start, hit.end, word, profile) or \
                    (forms.nfkc[hit.start:hit.end] == word and _token_modifier(forms, hit.start, hit.end, profile)):
                weight *= s.compound_factor
                other_sense += 1
            elif self._about_person(forms.nfkc, hit.start, option, hit.word):
                weight *= s.person_factor
                other_sense += 1
            elif verb_for_something_else(forms.nfkc, hit.start, option.words, profile.text):
                # 「トイレ借りて」: the listed verb is done to something the topic never speaks of
                weight *= s.compound_factor
                other_sense += 1
            hits += 1
            if any(a <= hit.start < b for a, b in set_aside):
                weight *= s.contrast_factor
            if weight <= 0:
                continue
            distinct.add(hit.word)
            best = max(best, weight)
            last = max(last, hit.end)
        if len(distinct) > 1:
            best += s.extra_word_bonus * (len(distinct) - 1)
        # every hit in another sense: the shared n-grams are that other sense too
        self._other_sense = hits > 0 and other_sense == hits
        return best, last

    def _about_person(self, text: str, start: int, option: Option, word: str) -> bool:
        """Whether a word the intent ties to a place (店の名前) is said of a
        person here (葵の名前, お名前, 君の名前): another topic."""
        owned = self._owned.get(str(option.input))
        return owned is not None and word in owned and said_of_person(text, start, self.names)

    def _similarity(self, units: set[str], profile: _Profile, set_aside_units: set[str]) -> float:
        mass = 0.0
        for unit in units & profile.units:
            weight = self.idf(unit)
            if unit in set_aside_units:
                weight *= self.tuning.contrast_factor
            mass += weight
        return 1.0 - math.exp(-mass / self.tuning.similarity_scale)

    def scores(self, text: str, choices: InterpretChoices, context: InterpretContext | None = None) -> dict[str, float]:
        """Score per option token (0 for options with no evidence)."""
        s = self.tuning
        forms = TextForms.of(text)
        for option in choices:
            self._profile(option)
        set_aside = _set_aside_spans(forms.nfkc)
        units = _ngrams(forms.folded, forms.nfkc)
        set_aside_units = _units_in(forms, set_aside)
        out: dict[str, float] = {}
        moves = self._moves(forms.nfkc, choices, context)
        leaving = farewell(forms.nfkc, self.names) or (self.names is not None and self.names.says_leaving(
            forms.nfkc, context.place if context is not None else None))
        related: dict[str, float] = {}
        for m in (self.meaning.matches(text) if self.meaning is not None else ()):
            # a word near a place's word (本名 ~ 名前) said of a person (ママの本名) is about the person
            owned = self._owned.get(m.intent, ())
            person = m.anchor in owned and said_of_person(forms.nfkc, m.start, self.names)
            related[m.intent] = m.cosine * (s.person_factor if person else 1.0)
        found = {o.token: self.matcher.hits(forms, o.words) for o in choices if o.is_intent and o.words}
        modifying = _modifying_clauses(forms.nfkc, found)
        for option in choices:
            if option.input.is_move:
                out[option.token] = 2.0 if option.input.target in moves else 0.0
            elif option.input.is_leave:
                out[option.token] = 2.0 if leaving and not moves else 0.0
            else:
                profile = self._profile(option)
                spans, aside_units = set_aside, set_aside_units
                if option.token in modifying:
                    # named only in a clause that modifies another topic's word (お酒が進む曲): set aside
                    spans = set_aside + modifying[option.token]
                    aside_units = _units_in(forms, spans)
                similarity = self._similarity(units, profile, aside_units)
                if option.words:
                    word, last = self._word_score(forms, option, profile, spans, found.get(option.token, []))
                    if self._other_sense:
                        similarity *= s.person_factor
                    # later mention wins a tie (the point of a sentence comes last)
                    position = s.position_bonus * last / max(1, len(forms.nfkc)) if word else 0.0
                    out[option.token] = word + s.similarity_weight * similarity + position
                else:
                    # no narrowing words: similarity alone, and only when the
                    # input shares the intent's characteristic characters
                    if profile.anchors and not any(a in forms.folded for a in profile.anchors):
                        similarity *= s.no_anchor_factor
                    out[option.token] = s.no_words_similarity_weight * similarity
                cosine = related.get(str(option.input), 0.0)
                if cosine:
                    # a word near this intent's words in meaning counts like a weaker listed word
                    out[option.token] = max(out[option.token], s.meaning_weight * cosine + s.similarity_weight * similarity)
        return out

    def _moves(self, text: str, choices: InterpretChoices, context: InterpretContext | None) -> list[str]:
        exits = [o.input.target for o in choices if o.input.is_move]
        if not exits:
            return []
        names = self.names
        if names is None:
            names = SceneNames({o.input.target: Place(o.input.target, o.names or (o.input.target,))
                                for o in choices if o.input.is_move}, {}, {})
        place = context.place if context is not None else ""
        return [p for p in explicit_moves(text, names, place, exits) if p != place]

    def interpret(self, text: str, choices: InterpretChoices, context: InterpretContext) -> Interpretation:
        start = time.perf_counter()
        result = Interpretation(backend=self.name)
        try:
            if not choices.options:
                result.detail = "no options left to choose from"
                return result
            scores = self.scores(text, choices, context)
            ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
            best_token, best = ranked[0]
            runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
            result.scores = dict(scores)
            s = self.tuning
            chosen = best >= s.threshold and (best - runner_up >= s.margin or best >= s.confident)
            result.best, result.margin = best, best - runner_up
            result.unsure = is_unsure(best, best - runner_up)
            result.scores[NONE_ANSWER] = 0.0 if chosen else max(self.tuning.threshold, best)
            if chosen:
                result.token = best_token
                result.input = choices.input_for(best_token)
                result.answer = best_token
            else:
                result.answer = NONE_ANSWER
                result.input = NONE
        except Exception as exc:    # never into the game
            result.input, result.token = NONE, None
            result.error, result.detail = ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}"
        finally:
            result.elapsed_ms = elapsed_ms(start)
        return result


# One-character particles, and the honorific prefix (お, ご) and the lengthening mark, each compared with one
# character (matched whole).
_PARTICLE = compiled("interpretation", "particle_char")
_HONORIFIC_PREFIX = compiled("interpretation", "honorific_prefix_char")
_LENGTHENING = compiled("reading", "lengthening_mark")


def _foreign_compound(forms: TextForms, start: int, end: int, word: str, profile: _Profile) -> bool:
    """Whether a word hit is only part of a longer word the intent's texts do
    not know:

    - a one-character kanji or katakana word at the head of a noun compound
      (味 in 味方を, 歌 in 歌舞伎町, 赤 in 赤ワイン).  Japanese compounds are
      right-headed, so the word at the end keeps its sense (名曲, 歌謡曲), and
      a following kanji with okurigana is a verb after a dropped particle
      (曲変えたら);
    - a word starting with hiragana glued to the verb stem before it
      (かける in 話しかける)."""
    text = forms.nfkc
    first = word[0]
    if len(word) == 1 and (is_kanji(first) or is_katakana(first)):
        def glued(ch: str) -> bool:
            return is_kanji(ch) or (is_katakana(ch) and not _LENGTHENING.fullmatch(ch))

        if start > 0 and glued(text[start - 1]):
            return False                      # the head of X曲, X酒: still that thing
        j = end
        while j < len(text) and glued(text[j]):
            j += 1
        if j == end:
            return False
        following = text[j] if j < len(text) else ""
        noun_like = not following or not is_hiragana(following) or bool(_PARTICLE.fullmatch(following)) or \
            is_katakana(text[end])
        return noun_like and forms.folded[start:end + 1] not in profile.text
    if is_hiragana(first) and start > 0:
        before = text[start - 1]
        if _HONORIFIC_PREFIX.fullmatch(before) and (start == 1 or not is_hiragana(text[start - 2]) or
                                                     _PARTICLE.fullmatch(text[start - 2])):
            return False          # the honorific prefix (おつまみ), not a verb stem
        return is_hiragana(before) and not _PARTICLE.fullmatch(before)
    return False


def _token_modifier(forms: TextForms, start: int, end: int, profile: _Profile) -> bool:
    """A listed word used as another word here (senses.py): the head of a compound, a part of a longer word."""
    return in_another_word(forms, start, end, profile.text)


def _units_in(forms: TextForms, spans: list[tuple[int, int]]) -> set[str]:
    """The n-grams found only inside `spans`."""
    units: set[str] = set()
    for a, b in spans:
        units |= _ngrams(forms.folded[a:b], forms.nfkc[a:b])
    return units - _ngrams(_cut(forms.folded, spans), _cut(forms.nfkc, spans)) if units else units


def _modifying_clauses(text: str, found: dict[str, list[WordHit]]) -> dict[str, list[tuple[int, int]]]:
    """Per option token, the spans where its words stand only in a clause
    that modifies a noun named by another option's word (お酒が進む曲: 酒 is
    in a clause about 曲; the sentence is about the song).  Japanese puts the
    modifying clause before its noun and ends it with a verb or adjective in
    the attributive form (連体形)."""
    if len(found) < 2:
        return {}
    tokens = analyse(text).tokens
    out: dict[str, list[tuple[int, int]]] = {}
    clause_start = 0
    for i, token in enumerate(tokens[:-1]):
        if token.pos[:1] == (TAG.supplementary_symbol,) or token.pos[:2] == (TAG.particle, TAG.conjunctive_particle):
            clause_start = token.end
            continue
        if token.pos[:1] not in ((TAG.verb,), (TAG.adjective,)) or not token.conjugation.startswith(TAG.attributive):
            continue
        head = tokens[i + 1]
        if not head.is_noun or head.start != token.end:
            continue
        span = (clause_start, token.end)
        clause_end = next((t.start for t in tokens[i + 1:] if t.pos[:1] == (TAG.supplementary_symbol,)), len(text))
        inside = {k for k, hits in found.items() if any(span[0] <= h.start and h.end <= span[1] for h in hits)}
        after = {k for k, hits in found.items() if any(head.start <= h.start < clause_end for h in hits)}
        for k in inside:
            if after - {k}:
                out.setdefault(k, []).append(span)
    return out


def _set_aside_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the text before a contrast marker, within its clause."""
    spans = []
    for clause_start, clause_end in clause_spans(text):
        clause = text[clause_start:clause_end]
        for m in _CONTRAST.finditer(clause):
            if m.end() < len(clause.rstrip("。！？!?、 ")):
                spans.append((clause_start, clause_start + m.start()))
    return spans


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    keep = []
    last = 0
    for a, b in sorted(spans):
        keep.append(text[last:a])
        last = max(last, b)
    keep.append(text[last:])
    return " ".join(keep)
