"""A line as it is meant, before anything reads it: meaning-neutral material set aside, kana spellings of known
words written as those words.

Players write the same line many ways. 「えっと、このおみせって何年やってるの？😊」 means what 「このお店って何年
やってるの？」 means: a filler at the head, an emoji at the end and a word in kana change nothing. Every reader
after this one (questions, orders, acts, the interpreter's words) is written for the plain line, so the plain
line is what they get; the player's own words are logged as they were written.

- **Set aside** (`neutral`): fillers and discourse markers at the head of the line (lexicon classes
  ``fillers`` and ``discourse_markers``, followed by a pause), laughter at the end of a clause (``laughter``),
  a closing clause that asks leave to ask what came before (``asking_leave_tails``: 「…、聞いたらあかんか」),
  and emoji anywhere. A line that is nothing else keeps its words (「笑」 alone, 「😊」 alone).
- **Respelled** (`Respeller`): a run of kana that reads as a known word — a scenario's names, places, items and
  words, and the lexicon's ``spellings`` — and lies on the analyser's word boundaries becomes that word
  (あおいちゃん → 葵ちゃん, ひかえしつ → 控え室, なまひとつ → 生ひとつ, but not the なま of なまえ), and so does
  a word the analyser reads as one in kana whose normalised form is a known word (げんき → 元気).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .. import kept, lazyre
from .ja import analyse
from .ja.tokens import AUXILIARY, CONJUNCTION, TAG
from .lexicon import compiled, kana_counters, listed, pattern, word_class
from .text import KANA_RUN, to_katakana

# Emoji and the characters that join or vary them (no Japanese word is written with these).
_EMOJI = lazyre.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF\uFE0F\u200D\U000E0020-\U000E007F"
                    "\u3030\u303D\u3297\u3299]+")
_HIRAGANA = lazyre.compile(r"[\u3041-\u309f]+")
_KANJI = lazyre.compile(r"[\u4e00-\u9fff々]")
_CLAUSE_END = r"(?=[\s、。，．,.!?！？…♪]|$)"
# Marks and spaces: what is left of a line that says nothing once they are taken out.
_MARKS = compiled("interpretation", "line_marks")
# Marks, spaces and stars: a line that is only these once the rest is set aside keeps its words.
_ONLY_MARKS = compiled("interpretation", "only_marks")
# 草 and 笑 as laughter, compared with one character.
_GRASS = compiled("interpretation", "grass")
_LAUGH_KANJI = compiled("interpretation", "laugh_kanji")


@lru_cache(maxsize=1)
def _head() -> re.Pattern[str]:
    words = "|".join(w for w in (word_class("fillers").alternation, word_class("discourse_markers").alternation))
    return re.compile(rf"^\s*(?:{words}){pattern('interpretation', 'pause')}")


@lru_cache(maxsize=1)
def _leave_tail() -> re.Pattern[str]:
    # after a question mark or a pause, to the end: 「…、聞いたらあかんか」「…？聞いてもいいですか？」
    return re.compile(rf"(?<=[？?、,，。\s　])\s*(?:{word_class('asking_leave_tails').alternation})"
                      rf"(?:{pattern('interpretation', 'leave_tail_polite')})?"
                      rf"(?:{pattern('interpretation', 'leave_tail_particle')})?"
                      r"[\s？?！!…。〜~]*$")


@lru_cache(maxsize=1)
def _quoted_name() -> re.Pattern[str]:
    return re.compile(r"[「『“\"]([^」』”\"。！？!?]{1,20})[」』”\"](?=" + pattern("moves", "quoted_name_after").lstrip("^") + ")")


@lru_cache(maxsize=1)
def _restating_tail() -> re.Pattern[str]:
    # right after the question particle, to the end: 「カード使えるかって聞いたんですけど」
    return re.compile(rf"(?:{word_class('restating_tails').alternation})"
                      rf"{pattern('interpretation', 'restating_tail_mark')}*$")


@lru_cache(maxsize=1)
def _laughter() -> re.Pattern[str]:
    return re.compile(rf"(?:{word_class('laughter').alternation})+{_CLAUSE_END}")


@dataclass(frozen=True)
class Neutral:
    text: str                    # the line without what is set aside
    set_aside: tuple[str, ...]   # what was, in order


def neutral(text: str) -> Neutral:
    """The line with meaning-neutral material set aside (fillers and markers at its head, laughter at the
    end of a clause, emoji); a line that is nothing else stays as it is."""
    aside: list[str] = []
    rest = text
    found = _EMOJI.findall(rest)
    if found:
        aside += found
        rest = _EMOJI.sub("", rest)
    # (a name or a title in brackets, talked about: 「なんで「血の池」って名前なん？」 reads as 血の池って)
    unquoted = _quoted_name().sub(r"\1", rest)
    if unquoted != rest:
        aside.append("quotes")
        rest = unquoted
    head = _head()
    while True:
        m = head.match(rest)
        if m is None or not rest[m.end():].strip():
            break
        aside.append(m.group(0).strip())
        rest = rest[m.end():]
    tail = _leave_tail().search(rest)
    if tail is not None and _MARKS.sub("", rest[:tail.start()]):
        aside.append(tail.group(0).strip())
        # (the tail asked: what it asks leave for is the question — 「ママの名前、聞いてもいい？」 asks the name)
        rest = rest[:tail.start()].rstrip("、,， 　。")
        rest = rest if rest.endswith(("？", "?")) else rest + "？"
    stretched = compiled("interpretation", "drawn_out").sub("", rest)
    if stretched != rest:
        aside.append("stretch")   # (葵ちゃ〜ん, すご〜い: a voice drawn out, the words as they are; ー stays — うーん is no うん)
        rest = stretched
    laugh = _laughter()
    kept = laugh.sub(lambda m: "" if m.start() > 0 and _laughable(rest, m) else m.group(0), rest)
    if kept != rest:
        aside.append("laughter")
        rest = kept
    restated = _restating_tail().search(rest)
    if restated is not None and _MARKS.sub("", rest[:restated.start()]):
        # (the player's own question said again: what it asked is the question — 「カード使えるかって聞いた
        # んですけど」 asks whether a card can be used; the entry's first character is the particle, kept)
        aside.append(restated.group(0)[1:].strip())
        rest = rest[:restated.start() + 1] + "？"
    rest = re.sub(r"[\s　]{2,}", " ", rest).strip()
    if not _ONLY_MARKS.sub("", rest):
        return Neutral(text, ())
    return Neutral(rest, tuple(aside))


def _laughable(text: str, m: re.Match[str]) -> bool:
    """Laughter only after a word: not the 笑 of 笑顔 (a clause end must follow), nor a kanji compound's last
    character (爆笑 is laughter, 苦笑 is a word either way) — after a kanji, 笑 is laughter where the analyser
    reads it as a word of its own (「誰笑？」「何歳笑？」), and so is 草 wherever it stands (かすみ草 is a flower)."""
    before = text[m.start() - 1]
    if _GRASS.fullmatch(m.group(0)[0]) or (_LAUGH_KANJI.fullmatch(m.group(0)[0]) and _KANJI.match(before)):
        # (草 anywhere, 笑 after a kanji: laughter only where the analyser reads it as a word of its own — not
        # the 草 of かすみ草 or 七草)
        return any(t.start == m.start() and t.surface == m.group(0)[0] for t in analyse(text).tokens)
    return True


class Respeller:
    """Kana spellings of known words read as those words."""

    def __init__(self, words: Iterable[str] = (), authored: Iterable[str] = ()) -> None:
        """`words` are named as words (the lexicon's, a scenario's names, places, items and topic words);
        `authored` are the nouns of what its characters say, read in kana only where the analyser cut them
        another way (`_split_otherwise`)."""
        known = [*word_class("spellings").entries, *words]
        # the words as written in kana: not made loanwords (a scenario's おでん stays おでん)
        self._kana_words = frozenset(_hiragana(w) for w in known if w and not _KANJI.search(w))
        self._by_reading = _by_reading(known)
        self._readings = sorted(self._by_reading, key=len, reverse=True)
        self._written = frozenset(self._by_reading.values())
        self._loose_by_reading = {**_by_reading(authored), **self._by_reading}
        self._loose_readings = sorted(self._loose_by_reading, key=len, reverse=True)
        # words whose head a player may write in kana and the rest in kanji (しょうてん街, はつ対面), by the
        # kanji their written rest starts with
        self._mixed: dict[str, list[tuple[str, int]]] = {}
        for word in sorted(set(self._loose_by_reading.values()), key=len, reverse=True):
            for k in range(1, len(word)):
                if _KANJI.match(word[k]) and _KANJI.search(word[:k]):
                    self._mixed.setdefault(word[k], []).append((word, k))

    def respell(self, text: str) -> str:
        if not _HIRAGANA.search(text):
            return text
        text = _counters_written(text)
        tokens = analyse(text).tokens
        starts = {t.start for t in tokens}
        ends = {t.end for t in tokens}
        spans: list[tuple[int, int, str]] = []
        taken = [False] * len(text)
        # (a span of words only: the ほう|が of 「カウンターのほうが」 is no 邦画)
        function = [i for t in tokens if t.pos[:1] in ((TAG.particle,), (TAG.auxiliary,), (TAG.supplementary_symbol,))
                    for i in range(t.start, t.end)]
        # (nor a word the analyser reads as a verb or an adjective: the しろ of 「早くしろよ」 is no 白)
        inflected = {(t.start, t.end) for t in tokens if t.pos[:1] in ((TAG.verb,), (TAG.adjective,))}
        # (nor a noun the analyser reads as adverbial in kana: the あと of 「あと3本」 is no 跡, the いま no 居間)
        inflected |= {(t.start, t.end) for t in tokens if t.is_adverbial}
        functional = _kept(text)                            # set phrases stay as written (おやすみなさい)
        for i in function:
            functional[i] = True
        for run in _HIRAGANA.finditer(text):
            for reading in self._readings:
                at = run.start()
                while (at := text.find(reading, at, run.end())) >= 0:
                    end = at + len(reading)
                    if at in starts and end in ends and not any(taken[at:end]) and not any(functional[at:end]) \
                            and (at, end) not in inflected:
                        spans.append((at, end, self._by_reading[reading]))
                        for i in range(at, end):
                            taken[i] = True
                    at += 1
        self._split_otherwise(text, tokens, taken, spans)
        self._mixed_spelling(text, starts, taken, _kept(text), spans)
        _loanwords(text, tokens, taken, _kept(text), spans, self._kana_words)
        for token in tokens:
            # a known word the analyser reads as one word in kana: its written form (げんき → 元気)
            # (read alike too: いつ is normalised as 何時, which reads なんじ)
            if _HIRAGANA.fullmatch(token.surface) and token.normalised in self._written and \
                    _reading(token.normalised) == token.surface and not any(taken[token.start:token.end]) and \
                    not any(functional[token.start:token.end]):
                spans.append((token.start, token.end, token.normalised))
        if not spans:
            return text
        out, at = [], 0
        for start, end, word in sorted(spans):
            out.append(text[at:start])
            out.append(word)
            at = end
        out.append(text[at:])
        return "".join(out)


    def _split_otherwise(self, text: str, tokens, taken: list[bool], spans: list[tuple[int, int, str]]) -> None:
        """Known words in kana that the analyser cut another way (すどおり|する read as す|どおり, きっさ read as a
        verb, なまで as な|まで): the reading stands where a word can stand — what comes before it ends a word
        (the line, a mark, a particle or a whole word), what follows it starts a particle, an ending or a word
        that follows a bare noun (する, ちょうだい: lexicon `spellings`' `followers`) — and no word the analyser
        read in kana with meaning (しょうがない, おつり) runs across either end."""
        kept = _kept(text)
        # (whole particles and endings only are no one-kanji word cut otherwise: the か|い of 「颯太かい？」 is no 壊;
        # the な|まで of なまで, cut inside まで, may be 生, and のみ|も|の is 飲み物)
        particles = {i for t in tokens if t.is_function for i in range(t.start, t.end)}
        bounds = {t.start for t in tokens} | {t.end for t in tokens}
        for run in _HIRAGANA.finditer(text):
            for reading in self._loose_readings:
                at = run.start()
                while (at := text.find(reading, at, run.end())) >= 0:
                    end = at + len(reading)
                    if not any(taken[at:end]) and not any(kept[at:end]) and \
                            not (len(self._loose_by_reading[reading]) == 1 and at in bounds and end in bounds and
                                 all(i in particles for i in range(at, end))) and \
                            self._stands(text, tokens, at, end):
                        spans.append((at, end, self._loose_by_reading[reading]))
                        taken[at:end] = [True] * (end - at)
                    at += 1

    def _mixed_spelling(self, text: str, starts: set[int], taken: list[bool], functional: list[bool],
                        spans: list[tuple[int, int, str]]) -> None:
        """A known word whose head is written in kana and the rest as written (しょうてん街 → 商店街, はつ対面 →
        初対面, いまの時期 → 今の時期): the kana read as the head's reading, starting where a word starts."""
        for run in _HIRAGANA.finditer(text):
            if run.end() >= len(text) or not _KANJI.match(text[run.end()]):
                continue
            for word, k in self._mixed.get(text[run.end()], ()):
                rest = word[k:]
                head = _reading(word[:k])
                start, end = run.end() - len(head), run.end() + len(rest)
                if len(head) < 2 or not text.startswith(rest, run.end()) or start < run.start() or \
                        text[start:run.end()] != head or any(taken[start:end]) or any(functional[start:end]):
                    continue
                if start != run.start() and start not in starts:
                    continue
                spans.append((start, end, word))
                taken[start:end] = [True] * (end - start)
                break

    @staticmethod
    def _stands(text: str, tokens, at: int, end: int) -> bool:
        inside = [t for t in tokens if at <= t.start and t.end <= end]
        for t in tokens:
            if t.start < at < t.end:
                return False     # (a word starts where one does: the かり of ばっかり is no 借り)
            if t.start < end < t.end and not _functional(t):
                return False
        if len(inside) == 1 and inside[0].start == at and inside[0].end == end:
            # one word as the analyser reads it: only a verb or adjective it made of a noun in kana by a form
            # that cannot stand there (きっさ as 喫す, しけん as 時化る), never a word it reads as meant (いつ,
            # おかわり, あおい of あおい空, かえる as said) nor a short one (しろ of 早くしろ is no 白)
            word = inside[0]
            if word.pos[:1] not in ((TAG.verb,), (TAG.adjective,)) or end - at <= 2 or word.surface == word.lemma:
                return False
        elif inside and _functional(inside[-1]) and any(not _functional(t) and t.pos[:1] != (TAG.prefix,)
                                                         for t in inside):
            return False         # a word and its particle (ほう|が of 「カウンターのほうがいい」 is no 邦画)
        if at > 0 and _HIRAGANA.match(text[at - 1]):
            before = analyse(text[:at]).tokens
            last = before[-1] if before else None
            if last is None or not (_functional(last) or len(last.surface) >= 2) or last.pos[:1] == (TAG.prefix,):
                return False
        if end < len(text) and _HIRAGANA.match(text[end]):
            after = analyse(text[end:]).tokens
            first = after[0] if after else None
            if first is None or not (_functional(first) or first.lemma in _followers()
                                     or first.surface in _followers()):
                return False
        return True


def _loanwords(text: str, tokens, taken: list[bool], kept: list[bool], spans: list[tuple[int, int, str]],
               known: frozenset[str]) -> None:
    """A loanword written in hiragana (からおけ, はいぼーる), which the analyser cuts into other words (から|おけ):
    kana that start the line or follow a space or a mark, from there to a word's end, three or more, that the
    dictionary knows in katakana as one common noun whose normalised form is katakana itself (カラオケ; not
    ダイコン, whose form is 大根), and that is no word the scenario writes in kana (its おでん stays おでん)."""
    for run in KANA_RUN.finditer(text):
        if run.start() > 0 and not _APART.match(text[run.start() - 1]):
            continue            # kana after a word's stem is its ending (専攻し|てたの, 店|はいつから): no loanword
        inside = [t for t in tokens if run.start() <= t.start and t.end <= run.end()]
        for first in inside[:1]:
            for last in reversed(inside):
                at, end = first.start, last.end
                if end - at < 3 or any(taken[at:end]) or any(kept[at:end]) or text[at:end] in known:
                    continue
                if first is last and not first.oov:
                    continue             # one word the analyser knows as written (あいす is 愛す as said)
                if _grammar_read(inside[:inside.index(last) + 1]):
                    continue             # a verb and its particles as said (いるか, だから): no イルカ, no ダカラ
                katakana = to_katakana(text[at:end])
                read = analyse(katakana).tokens
                if len(read) == 1 and read[0].pos[:2] == (TAG.noun, TAG.common_noun) and not read[0].oov and \
                        _KATAKANA_WORD.fullmatch(read[0].normalised):
                    spans.append((at, end, katakana))
                    taken[at:end] = [True] * (end - at)
                    break


def _grammar_read(tokens) -> bool:
    """Whether kana read as a known verb, adjective, auxiliary or conjunction and only particles and auxiliaries
    after it, ending on a particle (いる|か, だ|から), say what they say, not a loanword."""
    first, rest = tokens[0], tokens[1:]
    return not first.oov and (first.inflects or first.kind == CONJUNCTION) and bool(rest) and \
        all(t.is_particle or t.kind == AUXILIARY for t in rest) and rest[-1].is_particle


_KATAKANA_WORD = compiled("interpretation", "katakana_word")
_APART = compiled("interpretation", "apart")
# Katakana with a hiragana 0x60 below (ァ to ヶ).
_SHIFTED = compiled("interpretation", "katakana_shifted")


def _kept(text: str) -> list[bool]:
    """Where the text holds a set phrase that stays as written (spellings' `kept`: おやすみなさい is no お休み)."""
    kept = [False] * len(text)
    for phrase in word_class("spellings").kept:
        at = 0
        while (at := text.find(phrase, at)) >= 0:
            kept[at:at + len(phrase)] = [True] * len(phrase)
            at += len(phrase)
    return kept


def _by_reading(words: Iterable[str]) -> dict[str, str]:
    """Each word written with kanji by its reading in hiragana (the first word of a reading keeps it)."""
    found: dict[str, str] = {}
    for word in dict.fromkeys(w.strip() for w in words if w and _KANJI.search(w)):
        reading = _reading(word)
        if len(word) == 1 and any(t.is_common_noun and _KANJI.search(t.normalised) and
                                  t.normalised != word for t in analyse(reading).tokens):
            continue      # one kanji read alone is the dictionary's guess (撮 → つまみ): not where the kana is another noun (摘み)
        if reading and len(reading) >= 2 and reading != word:
            found.setdefault(reading, word)
    return found


def _functional(token) -> bool:
    return token.pos[:1] in ((TAG.particle,), (TAG.auxiliary,), (TAG.suffix,))


@lru_cache(maxsize=1)
def _followers() -> frozenset[str]:
    return frozenset(listed("spellings", "followers"))


@lru_cache(maxsize=1)
def _kana_counters() -> tuple[re.Pattern[str], dict[str, str]]:
    table = kana_counters()
    kana = "|".join(sorted(table, key=len, reverse=True))
    # after a number in digits or kanji, or 何/なん (「何ねん」); not inside a longer kana word (「2ほんとに」)
    return re.compile(rf"(?<={pattern('counts', 'number_end')})({kana})"), table


def _counters_written(text: str) -> str:
    """A counter in kana right after a number written as the counter (「三十ねんも？」 → 「三十年も？」), unless the
    analyser reads a longer word there (the ほんと of 「2ほんとにいいの」)."""
    pattern, table = _kana_counters()
    found = list(pattern.finditer(text))
    if not found:
        return text
    ends = {t.start: t.end for t in analyse(text).tokens}
    out, at = [], 0
    for m in found:
        if ends.get(m.start(), m.end()) > m.end():
            continue
        out.append(text[at:m.start()] + table[m.group(1)])
        at = m.end()
    return "".join(out) + text[at:]


@kept.table("spelling.reading")
def _reading(word: str) -> str:
    return "".join(_hiragana(t.reading or t.surface) for t in analyse(word).tokens)


def _hiragana(text: str) -> str:
    return "".join(chr(ord(c) - 0x60) if _SHIFTED.fullmatch(c) else c for c in text)


def scenario_words(scenario) -> list[str]:
    """The words of a compiled scenario a player may write in kana: names, places, items, topic words."""
    words: list[str] = []
    for cid, character in scenario.characters.items():
        words += [cid, character.name, *character.aliases]
        for entry in character.knowledge:
            words += [*entry.words, *entry.subject]
    for pid, place in scenario.places.items():
        words += [pid, *place.aliases]
    for menu in scenario.menus.values():
        for item in menu.items:
            words += [item.id, *item.words, *item.parts]
        for called in (menu.called or {}).values():
            words += called          # what the menu's things are called as a whole (お花 at a florist's)
    for intent in scenario.intents.values():
        words += intent.words
    return words


def authored_nouns(scenario) -> list[str]:
    """Nouns of two characters or more written with kanji in what the scenario's characters know and say and
    in its intents' examples (素通り, 喫茶, 師匠): a player may write them in kana (すどおり, きっさ) and mean them."""
    texts: list[str] = []
    for character in scenario.characters.values():
        for entry in character.knowledge:
            texts += [entry.info, *(line.text for line in entry.lines)]
    texts += [line.text for line in scenario.lines.values()]
    for intent in scenario.intents.values():
        texts += [intent.description, *intent.examples]
    return sorted({noun for text in texts for noun in _kanji_nouns(text)})


@kept.table("spelling.kanji_nouns", encode=list, decode=tuple)
def _kanji_nouns(text: str) -> tuple[str, ...]:
    return tuple(t.surface for t in analyse(text).tokens
                 if t.pos[:1] == (TAG.noun,) and len(t.surface) >= 2 and _KANJI.search(t.surface))
