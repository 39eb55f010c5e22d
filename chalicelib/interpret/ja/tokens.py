"""Typed tokens: what every analyser gives the rest of interpretation."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

# The analyser's top-level parts of speech that are named in code (UniDic / Sudachi tags).
VERB, ADJECTIVE, AUXILIARY, PARTICLE, PREFIX, CONJUNCTION = "動詞", "形容詞", "助動詞", "助詞", "接頭辞", "接続詞"
# Second-level parts of speech named in code: a number, and a noun that can count after one (ヶ月, 本).
NUMERAL, MAY_COUNT, MAY_DESCRIBE = "数詞", "助数詞可能", "形状詞可能"
# A common noun (not a name): its top and second levels.
COMMON_NOUN = ("名詞", "普通名詞")
# Conjugation forms named in code: a verb that may end a clause or describe the noun after it (頼む人).
ATTRIBUTIVE_OR_FINAL = ("連体形", "終止形")
# Parts of speech (UniDic / Sudachi top level) that carry a topic.
CONTENT_POS = ("名詞", "動詞", "形容詞", "形状詞")
# Second-level parts of speech that do not, even under a content part of speech.
_NOT_CONTENT_SUB = ("数詞", "非自立可能", "固有名詞?", "助動詞語幹")


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
        return sub not in ("数詞", "非自立可能", "助動詞語幹")

    @property
    def is_adverbial(self) -> bool:
        """A noun the analyser marks as usable as an adverb (あと, いま, 今日)."""
        return "副詞可能" in self.pos

    @property
    def is_noun(self) -> bool:
        return bool(self.pos) and self.pos[0] == "名詞" and (len(self.pos) < 2 or self.pos[1] != "数詞")

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
        return self.pos[:2] == (PARTICLE, "接続助詞")

    @property
    def is_case_particle(self) -> bool:
        """A case particle (を, に, と of 弟と)."""
        return self.pos[:2] == ("助詞", "格助詞")

    @property
    def is_mark(self) -> bool:
        """Punctuation, a symbol or a space: nothing said."""
        return self.pos[:1] in (("補助記号",), ("空白",))

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
        return self.pos[:1] == ("助動詞",) and self.lemma == "た"


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
