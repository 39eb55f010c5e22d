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
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..interpret.ja import analyse
from ..interpret.ja.tokens import Token
from ..interpret.text import nfkc
from .book import BookLine, LineBook

# Words every line uses, and words that only carry the question's grammar.
_STOP = frozenset("""
する いる ある なる 思う 言う こと もの の ん よう そう これ それ あれ ここ そこ あそこ どこ 何 なに 誰 いつ どう
どれ いい 良い よい 私 僕 俺 あなた 君 お前 あんた 自分 人 事 時 今 方 感じ 話 ちゃん さん くん 様 みんな 皆 本当 ほんと
ちょっと 少し もう まだ また すごい とても くれる もらう あげる みる おく しまう いく くる 行く 来る 出来る できる
分かる わかる 知る 聞く 教える 気 的 風 等 など 一 二 たち 達 前 後 うち
""".split())
_SENTENCE = re.compile(r"[^。！？!?]*[。！？!?]+|[^。！？!?]+$")
_QUESTION_END = re.compile(r"[？?]\s*$")
# What a question asks for: a number with a counter (何年, 何杯, いくら …).
_ASKS_NUMBER = re.compile(r"何(年|杯|歳|才|人|時|回|階|文字|日|本|枚|品|円)|いくつ|いつから|どのくらい|どれくらい|どれぐらい"
                          r"|どんだけ|何十年|いくら|何時|長い(?:の|ん|です)|長く(?:やって|続)")
_TIME_COUNTERS = frozenset("年 月 日 時 時間 週 歳 才".split())
# A question: a question mark, a question particle at the end (not かな alone: 「好きかな」 muses), a wh-word
# with a sentence-final particle, or asking to be told.
_QUESTION_CUE = re.compile(r"[？?]|(?:の|か|かしら|っけ|だっけ|ですか|ますか)\s*$|教えて|聞かせて|知りたい|って何|ってなに"
                           r"|(?:何|なに|なん|どこ|誰|だれ|いつ|どう|どんな|どれ|なぜ|なんで|いくら)[^。！!]*(?:かな|の|か)\s*$")


def sentences(text: str) -> list[str]:
    return [s.strip(" 　") for s in _SENTENCE.findall(text) if s.strip(" 　…")]


def is_question(text: str) -> bool:
    return bool(_QUESTION_CUE.search(nfkc(text).strip()))


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
        return ref.split("/")[2].startswith("本人")
    return kind in ("line", "knowledge", "chatter", "arrival", "ending", "model")


@lru_cache(maxsize=4096)
def _analysed(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    tokens = analyse(nfkc(text)).tokens
    keys: set[str] = set()
    nouns: set[str] = set()
    counters: set[str] = set()
    for i, token in enumerate(tokens):
        if token.pos[1:2] == ("数詞",) and i + 1 < len(tokens) and "助数詞可能" in tokens[i + 1].pos:
            counters.add(tokens[i + 1].normalised)
        if _is_key(token) and not (i > 0 and tokens[i - 1].pos[1:2] == ("数詞",) and "助数詞可能" in token.pos):
            keys.add(token.normalised or token.lemma)
            if token.is_noun:
                nouns.add(token.normalised or token.lemma)
    return frozenset(keys), frozenset(counters), frozenset(nouns)


def _is_key(token: Token) -> bool:
    if not token.is_content or token.pos[:1] == ("代名詞",):
        return False
    form = token.normalised or token.lemma
    return form not in _STOP and token.lemma not in _STOP and len(form) >= 1


@dataclass(frozen=True)
class Found:
    sentence: Sentence
    score: float
    said: bool           # the line was said in this game (a recall) or is still unsaid (news)
    counted: bool = False    # it holds the number the question asks for (何年 → 三十年)


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

    def idf(self, key: str) -> float:
        return math.log(1.0 + self._docs / (1 + self._df.get(key, 0)))

    def of(self, ref: str) -> list[Sentence]:
        found = self._by_ref.get(ref)
        if found is None:
            line = self.book.get(ref)
            found = self._split(line) if line is not None else []
        return found

    def spoken(self, ref: str, speaker: str, text: str) -> list[Sentence]:
        """Sentences of a line no reference resolves (a model's line)."""
        return self._split(BookLine(ref, speaker, text, "neutral"))

    def question_keys(self, text: str) -> tuple[frozenset[str], str | None]:
        keys, _, _ = _analysed(text)
        keys = frozenset(k for k in keys if nfkc(k) not in self.names)
        asked = _ASKS_NUMBER.search(nfkc(text))
        counter = None
        if asked:
            counter = asked.group(1) if asked.groups() and asked.group(1) else "time"
            if asked.group(0) == "いくら":
                counter = "円"
        return keys, counter

    def score(self, text: str, sentence: Sentence) -> float:
        """How well one sentence answers the question (0 when it does not)."""
        keys, counter = self.question_keys(text)
        return self._score(keys, counter, sentence)

    def _score(self, keys: frozenset[str], counter: str | None, sentence: Sentence) -> float:
        shared = keys & sentence.keys
        counted = counter is not None and (counter in sentence.counters or
                                           (counter == "time" and bool(sentence.counters & _TIME_COUNTERS)))
        # what the question is about: a noun they share, or the number it asks for
        if not (shared & sentence.nouns) and not counted:
            return 0.0
        return sum(self.idf(k) for k in shared) + (2.5 if counted else 0.0)

    def best(self, text: str, said: Iterable[Sentence], known: Iterable[Sentence], *,
             prefer: str | None = None, topic: frozenset[str] = frozenset()) -> Found | None:
        """The sentence that answers the question best (said ones and known ones), or None.  `topic`: line
        references of the topic the line was read as (their sentences count a little more)."""
        keys, counter = self.question_keys(text)
        if not keys and counter is None:
            return None
        best: Found | None = None
        for pool, was_said in ((said, True), (known, False)):
            for sentence in pool:
                score = self._score(keys, counter, sentence)
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
                        counter == "time" and bool(sentence.counters & _TIME_COUNTERS)))
                    best = Found(sentence, score, was_said, counted)
        return best
