"""What was said, and what the characters know, as sentences a question can be answered from.

A player's question about something a character already said (「この店、何年やってるの？」 after ママ
said 「うちは三十年このままでやってきたんだから」) gets that sentence back; a question about something a
present character knows but has not said yet gets that knowledge line.  No model: the question and every
sentence are read with the analyser, and a sentence answers when it shares the question's specific words
(weighted by how rare they are among the scenario's sentences) — or, for a question asking for a number
(何年, いつから, いくら), when it holds a number with the counter asked for.

Sources: every line said in this game (scripted, authored, a model's), and per character present their
knowledge lines, their 本人 reactions (what they say about themselves) and their chatter.  Questions are
never facts (a sentence ending in ？).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .. import kept, lazyre
from ..dialogue_acts import ACT
from ..interpret.asking import is_question  # noqa: F401  (the one reading of a question, re-exported)
from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG, Token
from ..interpret.lexicon import compiled, mapping
from ..interpret.text import is_kanji, nfkc
from .book import BookLine, LineBook

# Words every line uses, and words that only carry the question's grammar (one word, matched whole).
_STOP = compiled("conversation", "facts_stop_words")
# Suffixes that make a noun another thing (映画館, 本屋, 料理人): the compound, not the noun, is named (one token).
_THING_SUFFIXES = compiled("conversation", "facts_thing_suffix")
_SENTENCE = lazyre.compile(r"[^。！？!?]*[。！？!?]+|[^。！？!?]+$")
_QUESTION_END = lazyre.compile(r"[？?]\s*$")
# What a question asks for: a number with a counter (何年, 何杯, いくら …).
_ASKS_NUMBER = compiled("conversation", "facts_asks_number")
# Counters of time (年, 時間, 歳): a sentence holding one answers how long or since when (one counter, whole).
_TIME_COUNTERS = compiled("conversation", "facts_time_counter")
TOLD_KEYS = 3        # a line told before shares at least this many words with one said line
TOLD_SHARE = 0.6     # ... and this share of its weight
TOLD_OTHER = 0.4     # ... and this share of the other line's weight; or
TOLD_SENTENCE = 0.8  # one of its sentences, with that share of its weight, has this share of it in the other
TOLD_RARE = 3.0      # and two of the shared words at least are this rare (idf) among the scenario's sentences,
TOLD_RARE_SENTENCES = 3   # or held by this many of its sentences at most (a small scenario's idf says little)
AGAIN_SHARE = 0.6    # a question asks again what a line said when that line holds this share of its words' weight


def _of_time(counters: frozenset[str]) -> bool:
    """Whether one of a sentence's counters is one of time."""
    return any(_TIME_COUNTERS.fullmatch(c) for c in counters)


def _unstopped(keys: frozenset[str]) -> frozenset[str]:
    """The keys that are no stop words."""
    return frozenset(k for k in keys if not _STOP.fullmatch(k))


def _within(key: str, keys: frozenset[str]) -> bool:
    """A kanji word ending a kanji compound of the other line (夏 in 真夏; compounds are right-headed, so
    not 看板 in 看板猫): the same thing said."""
    return all(is_kanji(c) for c in key) and any(k.endswith(key) and all(is_kanji(c) for c in k) for k in keys)


def sentences(text: str) -> list[str]:
    return [s.strip(" 　") for s in _SENTENCE.findall(text) if s.strip(" 　…")]


@dataclass(frozen=True)
class Sentence:
    ref: str             # the line's reference
    speaker: str | None
    text: str            # the sentence itself
    keys: frozenset[str]
    counters: frozenset[str]     # counters after a number (年 of 三十年)
    nouns: frozenset[str] = frozenset()   # the keys that are nouns (what a question is about)


def is_fact(ref: str) -> bool:
    """Lines that say something about the world or the speaker: scripted lines, knowledge lines, what a
    character brings up, place lines, and 本人 reactions.  Fallbacks, other reactions, lead-ins, clarifying
    questions and replies say nothing a question could be about."""
    kind = ref.split("/", 1)[0]
    if ">" in ref:
        return False
    if kind == "reaction":
        return ref.split("/")[2].startswith(ACT.about_self)
    return kind in ("line", "knowledge", "chatter", "arrival", "ending", "model")


@kept.table("facts.sentence_keys", encode=lambda found: [sorted(part) for part in found],
            decode=lambda parts: tuple(frozenset(part) for part in parts))
def _analysed(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    tokens = analyse(nfkc(text)).tokens
    keys: set[str] = set()
    nouns: set[str] = set()
    counters: set[str] = set()
    for i, token in enumerate(tokens):
        if token.pos[1:2] == (TAG.numeral,) and i + 1 < len(tokens) and TAG.may_count in tokens[i + 1].pos:
            counters.add(tokens[i + 1].normalised)
            # the quantity itself says something (三十年): a word of its own, a noun
            j = i
            while j > 0 and tokens[j - 1].pos[1:2] == (TAG.numeral,):
                j -= 1
            quantity = "".join(t.surface for t in tokens[j:i + 2])
            keys.add(quantity)
            nouns.add(quantity)
        if _is_key(token) and not (i > 0 and tokens[i - 1].pos[1:2] == (TAG.numeral,) and TAG.may_count in token.pos):
            form = token.normalised or token.lemma
            if token.is_noun and i + 1 < len(tokens) and tokens[i + 1].pos[:2] == (TAG.suffix, TAG.noun_like) and \
                    _THING_SUFFIXES.fullmatch(tokens[i + 1].surface):
                # 映画館 is a place, not a film: the compound is the thing named (its suffix is its head)
                form += tokens[i + 1].surface
            keys.add(form)
            if token.is_noun:
                nouns.add(form)
    return frozenset(keys), frozenset(counters), frozenset(nouns)


def nouns_of(text: str) -> frozenset[str]:
    """The nouns of a text as the facts read them (normalised forms; a quantity such as 三十年 is one)."""
    return _analysed(text)[2]


@lru_cache(maxsize=4096)
def _frame_word(word: str) -> bool:
    """A noun that sets a frame (今日, 一番, 最近: 副詞可能) rather than names a thing."""
    tokens = analyse(word).tokens
    return len(tokens) == 1 and TAG.may_be_adverb in tokens[0].pos


@lru_cache(maxsize=4096)
def _frames(text: str) -> frozenset[str]:
    """Nouns that set a frame rather than name a thing (今日, 最近, いつも: 副詞可能)."""
    return frozenset(t.normalised or t.lemma for t in analyse(nfkc(text)).tokens if TAG.may_be_adverb in t.pos)


def _is_key(token: Token) -> bool:
    if not token.is_content or token.pos[:1] == (TAG.pronoun,):
        return False
    form = token.normalised or token.lemma
    return not _STOP.fullmatch(form) and not _STOP.fullmatch(token.lemma) and len(form) >= 1


@dataclass(frozen=True)
class Found:
    sentence: Sentence
    score: float
    said: bool           # the line was said in this game (a recall) or is still unsaid (news)
    counted: bool = False    # it holds the number the question asks for (何年 → 三十年)
    cover: float = 1.0       # the share of the line's own words' weight the sentence holds


class Facts:
    """The sentences of one scenario's lines, indexed once; a game's facts are those said plus what the
    characters present know."""

    def __init__(self, book: LineBook, names: Iterable[str] = ()) -> None:
        self.book = book
        self.names = {nfkc(n) for n in names if n}
        self._by_ref: dict[str, list[Sentence]] = {}
        df: dict[str, int] = {}
        for line in book:
            found = self._split(line)
            self._by_ref[line.ref] = found
            for s in found:
                for key in s.keys:
                    df[key] = df.get(key, 0) + 1
        self._docs = max(1, sum(len(v) for v in self._by_ref.values()))
        self._df = df

    def _split(self, line: BookLine) -> list[Sentence]:
        if not is_fact(line.ref):
            return []
        out = []
        carried: frozenset[str] = frozenset()
        for text in sentences(line.text):
            if "{" in text:
                continue
            if _QUESTION_END.search(text):
                # 「カラオケ？　置かないわよ。」: a short echo of the topic belongs to the answer after it
                carried = _analysed(text)[2] if len(text) <= 10 else frozenset()
                continue
            keys, counters, nouns = _analysed(text)
            keys, nouns, carried = keys | carried, nouns | carried, frozenset()
            keys = frozenset(k for k in keys if nfkc(k) not in self.names)
            if keys or counters:
                out.append(Sentence(line.ref, line.speaker, text, keys, counters, nouns & keys))
        return out

    def told(self, ref: str, said: Iterable[str]) -> bool:
        # (only lines of the same speaker are compared: two characters may well say alike)
        """Whether the line `ref` tells what one of the lines `said` told already, in other words: they share
        `TOLD_KEYS` words or more (a noun among them), most of its weight (`TOLD_SHARE`) and a good part of
        the other's (`TOLD_OTHER`, so that a long line that happens to hold its words does not count)."""
        own = self._keys(ref)
        mass = sum(self.idf(k) for k in own[0])
        if mass <= 0:
            return False
        for other in said:
            keys, nouns = self._keys(other)
            shared = frozenset(k for k in own[0] if k in keys or _within(k, keys))
            if not shared & own[1] or sum(1 for k in shared if self._rare(k)) < 2:
                continue
            weight = sum(self.idf(k) for k in shared)
            if len(shared) >= TOLD_KEYS and weight >= TOLD_SHARE * mass and \
                    weight >= TOLD_OTHER * sum(self.idf(k) for k in keys):
                return True
            # one sentence of it, carrying most of its weight, said again in other words in one sentence of a
            # longer line
            for sentence in self.of(ref):
                part = sum(self.idf(k) for k in sentence.keys)
                inside = max((frozenset(k for k in sentence.keys if k in o.keys or _within(k, o.keys))
                              for o in self.of(other)), key=len, default=frozenset())
                if len(inside) >= min(TOLD_KEYS, max(2, len(sentence.keys))) and part >= TOLD_SHARE * mass and \
                        sum(self.idf(k) for k in inside) >= TOLD_SENTENCE * part:
                    return True
        return False

    def _rare(self, key: str) -> bool:
        """A word few of the scenario's sentences hold (ドア, said all over a bar with a red door, is not)."""
        return self._df.get(key, 0) <= TOLD_RARE_SENTENCES or self.idf(key) >= TOLD_RARE

    def _keys(self, ref: str) -> tuple[frozenset[str], frozenset[str]]:
        sentences = self.of(ref)
        return (frozenset().union(*(s.keys for s in sentences)) if sentences else frozenset(),
                frozenset().union(*(s.nouns for s in sentences)) if sentences else frozenset())

    def idf(self, key: str) -> float:
        return math.log(1.0 + self._docs / (1 + self._df.get(key, 0)))

    def of(self, ref: str) -> list[Sentence]:
        found = self._by_ref.get(ref)
        if found is None:
            line = self.book.get(ref)
            found = self._split(line) if line is not None else []
        return found

    def spoken(self, ref: str, speaker: str | None, text: str) -> list[Sentence]:
        """Sentences of a line no reference resolves (a model's line)."""
        return self._split(BookLine(ref, speaker, text, "neutral"))

    def question_keys(self, text: str) -> tuple[frozenset[str], str | None]:
        keys, _, _ = _analysed(text)
        keys = frozenset(k for k in keys if nfkc(k) not in self.names)
        asked = _ASKS_NUMBER.search(nfkc(text))
        counter = None
        if asked:
            counter = asked.group(1) if asked.groups() and asked.group(1) else "time"
            counter = mapping("conversation", "facts_counter_asked").get(asked.group(0), counter)
        return keys, counter

    def score(self, text: str, sentence: Sentence) -> float:
        """How well one sentence answers the question (0 when it does not)."""
        keys, counter = self.question_keys(text)
        return self._score(keys, counter, sentence, _frames(text))

    def _score(self, keys: frozenset[str], counter: str | None, sentence: Sentence,
               frames: frozenset[str] = frozenset()) -> float:
        shared = keys & sentence.keys
        counted = counter is not None and (counter in sentence.counters or
                                           (counter == "time" and _of_time(sentence.counters)))
        # what the question is about: a noun they share — a thing, not a frame (今日, 一番: 「今日は誰も来ないの？」
        # is not about 「今日のお通し」; nor a place relative to something, as the question uses it: the 下 of
        # 「その人の下で修行」 is no 換気扇の下) — or the number it asks for
        if not frozenset(k for k in shared & sentence.nouns if not _frame_word(k) and k not in frames) and \
                not counted:
            return 0.0
        return sum(self.idf(k) for k in shared) + (2.5 if counted else 0.0)

    def asks_again(self, text: str, said: Iterable[Sentence], extra: Iterable[str] = (),
                   head: str | None = None) -> bool:
        """Whether the question `text` asks again what the sentences `said` (and the words `extra`, an
        entry's own) told: they hold most of its words' weight (`AGAIN_SHARE`), a thing among them (not only
        a frame such as 今日), or the number it asks for.  「師匠さんに弟子入りしたきっかけは？」 after 「先代は私の
        師匠」 asks something new (弟子入り, きっかけ); 「先代って誰だっけ？」 asks the same again."""
        keys, counter = self.question_keys(text)
        said = list(said)
        covered = frozenset().union(*(s.keys for s in said)) if said else frozenset()
        for word in extra:
            covered |= _analysed(word)[0]
        if counter is not None and any(counter in s.counters or (counter == "time" and _of_time(s.counters))
                                       for s in said):
            return True
        hit = frozenset(k for k in keys if k in covered or _within(k, covered))
        if not hit - _frames(text):
            return False
        if head and (heads := _unstopped(_analysed(head)[0])) and not any(k in covered or _within(k, covered)
                                                                          for k in heads):
            return False        # 「その常連さん、お名前は？」 asks for a name the line about the regular did not say
        mass = sum(self.idf(k) for k in keys)
        return sum(self.idf(k) for k in hit) >= AGAIN_SHARE * mass

    def best(self, text: str, said: Iterable[Sentence], known: Iterable[Sentence], *,
             prefer: str | None = None, topic: frozenset[str] = frozenset()) -> Found | None:
        """The sentence that answers the question best (said ones and known ones), or None.  `topic`: line
        references of the topic the line was read as (their sentences count a little more)."""
        keys, counter = self.question_keys(text)
        if not keys and counter is None:
            return None
        best: Found | None = None
        mass = sum(self.idf(k) for k in keys) or 1.0
        frames = _frames(text)
        for pool, was_said in ((said, True), (known, False)):
            for sentence in pool:
                score = self._score(keys, counter, sentence, frames)
                if score <= 0:
                    continue
                if sentence.ref in topic:
                    score += 1.0
                if prefer is not None and sentence.speaker == prefer:
                    score += 0.3
                if not was_said:
                    score += 0.1          # news rather than a repeat, when they answer alike
                if best is None or score > best.score:
                    counted = counter is not None and (counter in sentence.counters or (
                        counter == "time" and _of_time(sentence.counters)))
                    cover = sum(self.idf(k) for k in keys & sentence.keys) / mass
                    best = Found(sentence, score, was_said, counted, cover)
        return best
