"""Typed tokens: what every analyser gives the rest of interpretation."""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Tags:
    """The analyser's tags that code names (UniDic parts of speech and conjugation forms, as Sudachi gives
    them), read from tags.json so that no tag is written in Python: `TAG.noun`, `TAG.case_particle`."""
    noun: str
    verb: str
    adjective: str
    adjectival_noun: str
    auxiliary: str
    particle: str
    prefix: str
    suffix: str
    conjunction: str
    pronoun: str
    adnominal: str
    interjection: str
    adverb: str
    symbol: str
    supplementary_symbol: str
    blank: str
    common_noun: str
    proper_noun: str
    general: str
    person_name: str
    place_name: str
    numeral: str
    may_count: str
    may_describe: str
    may_be_adverb: str
    may_take_suru: str
    may_be_dependent: str
    auxiliary_stem: str
    conjunctive_particle: str
    case_particle: str
    adverbial_particle: str
    final_particle: str
    binding_particle: str
    noun_like: str
    attributive: str
    final: str
    continuative: str
    volitional: str
    imperative: str
    conditional: str
    irrealis: str


@dataclass(frozen=True)
class Words:
    """The few words code compares a token's lemma with (tags.json `words`): the auxiliary of the past."""
    past: str


_TAGS = json.loads((Path(__file__).resolve().parent / "tags.json").read_text(encoding="utf-8"))
TAG = Tags(**_TAGS["tags"])
WORD = Words(**_TAGS["words"])

# The analyser's top-level parts of speech that are named in code.
VERB, ADJECTIVE, AUXILIARY, PARTICLE, PREFIX, CONJUNCTION = \
    TAG.verb, TAG.adjective, TAG.auxiliary, TAG.particle, TAG.prefix, TAG.conjunction
# Second-level parts of speech named in code: a number, and a noun that can count after one (ヶ月, 本).
NUMERAL, MAY_COUNT, MAY_DESCRIBE = TAG.numeral, TAG.may_count, TAG.may_describe
# A common noun (not a name): its top and second levels.
COMMON_NOUN = (TAG.noun, TAG.common_noun)
# Conjugation forms named in code: a verb that may end a clause or describe the noun after it (頼む人).
ATTRIBUTIVE_OR_FINAL = (TAG.attributive, TAG.final)
# Parts of speech (top level) that carry a topic.
CONTENT_POS = (TAG.noun, TAG.verb, TAG.adjective, TAG.adjectival_noun)
# Second-level parts of speech that do not, even under a content part of speech.
_NOT_CONTENT_SUB = (TAG.numeral, TAG.may_be_dependent, TAG.auxiliary_stem)


@dataclass(frozen=True)
class Token:
    surface: str          # as written (offsets index the analysed text)
    lemma: str            # dictionary form: 飲もう → 飲む
    normalised: str       # normalised form: 入口 → 入り口, おんがく → 音楽, ｲﾝｽﾀ → インスタ
    reading: str          # katakana reading
    pos: tuple[str, ...]  # part of speech, most general first: ("動詞", "一般", …)
    conjugation: str      # conjugation form: 意志推量形, 連用形-促音便 … ("" when it does not inflect)
    start: int
    end: int
    oov: bool = False     # not in the dictionary
    prefix: int = 0       # the length of an honorific prefix read as part of it (お of おすすめ: the word is after)

    @property
    def is_content(self) -> bool:
        """A noun, verb, adjective or adjectival noun that can name a topic
        (not a number, pronoun, or a verb that mostly serves grammar: する, いる, ある)."""
        if not self.pos or self.pos[0] not in CONTENT_POS:
            return False
        sub = self.pos[1] if len(self.pos) > 1 else ""
        return sub not in _NOT_CONTENT_SUB

    @property
    def is_adverbial(self) -> bool:
        """A noun the analyser marks as usable as an adverb (あと, いま, 今日)."""
        return TAG.may_be_adverb in self.pos

    @property
    def is_noun(self) -> bool:
        return bool(self.pos) and self.pos[0] == TAG.noun and (len(self.pos) < 2 or self.pos[1] != TAG.numeral)

    @property
    def is_numeral(self) -> bool:
        """A number (一, 3, 三十)."""
        return self.pos[1:2] == (NUMERAL,)

    @property
    def may_count(self) -> bool:
        """A noun that can be a counter after a number (ヶ月 of 一ヶ月, 本, 杯)."""
        return MAY_COUNT in self.pos

    @property
    def is_particle(self) -> bool:
        return self.kind == PARTICLE

    @property
    def is_function(self) -> bool:
        """A particle or an auxiliary: a word of grammar only (か, い, だ)."""
        return self.kind in (PARTICLE, AUXILIARY)

    @property
    def is_conjunctive(self) -> bool:
        """A particle that joins clauses (て, ば, から of a reason)."""
        return self.pos[:2] == (PARTICLE, TAG.conjunctive_particle)

    @property
    def is_case_particle(self) -> bool:
        """A case particle (を, に, と of 弟と)."""
        return self.pos[:2] == (PARTICLE, TAG.case_particle)

    @property
    def is_mark(self) -> bool:
        """Punctuation, a symbol or a space: nothing said."""
        return self.pos[:1] in ((TAG.supplementary_symbol,), (TAG.blank,))

    @property
    def kind(self) -> str:
        """The most general part of speech (動詞, 助詞 …), "" where none."""
        return self.pos[0] if self.pos else ""

    @property
    def is_verb(self) -> bool:
        return self.kind == VERB

    @property
    def is_predicate(self) -> bool:
        """A verb or an adjective: what a clause may end on."""
        return self.kind in (VERB, ADJECTIVE)

    @property
    def may_describe(self) -> bool:
        """A noun that can be said of something as its state (いっぱい, 元気): with だ or です after it, a predicate."""
        return MAY_DESCRIBE in self.pos

    @property
    def is_common_noun(self) -> bool:
        return self.pos[:2] == COMMON_NOUN

    @property
    def inflects(self) -> bool:
        """A verb, an adjective or an auxiliary: a word with endings."""
        return self.kind in (VERB, ADJECTIVE, AUXILIARY)

    @property
    def is_prefix(self) -> bool:
        return self.kind == PREFIX

    @property
    def is_past(self) -> bool:
        """The auxiliary of the past (た, だ after a voiced stem)."""
        return self.pos[:1] == (AUXILIARY,) and self.lemma == WORD.past


@dataclass(frozen=True)
class Analysis:
    text: str
    tokens: tuple[Token, ...]

    def content(self) -> list[Token]:
        return [t for t in self.tokens if t.is_content]

    def at(self, position: int) -> Token | None:
        for token in self.tokens:
            if token.start <= position < token.end:
                return token
        return None

    def index_at(self, position: int) -> int | None:
        for i, token in enumerate(self.tokens):
            if token.start <= position < token.end:
                return i
        return None


class Analyser(Protocol):
    name: str

    def analyse(self, text: str) -> Analysis: ...


def lemmas(tokens: Sequence[Token]) -> list[str]:
    return [t.lemma for t in tokens]
