"""Japanese text helpers shared by narrowing, refinement and the lexical backend.

Everything here is pure Python and cheap: an input is normalised once
(`TextForms`) and every matcher works on those forms.

- ``nfkc``: NFKC (full/half width, compatibility characters) and lower case.
- ``fold``: ``nfkc`` with katakana turned into hiragana, so カラオケ, からおけ
  and ｶﾗｵｹ meet.  Folding keeps positions: ``nfkc(t)[i]`` and ``fold(t)[i]``
  are the same character in two scripts.
- ``WordMatcher``: does the input contain one of a list of words, allowing
  the obvious variants of each word (conjugation of verbs and adjectives,
  okurigana between kanji, width and kana script).  ``PlainMatcher`` is the
  raw substring test of the source article, kept for measuring the gain.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .. import kept, lazyre
from .lexicon import compiled as table_pattern
from .lexicon import mapping, pattern

# ---------------------------------------------------------------- character classes

_KATAKANA_START, _KATAKANA_END = 0x30A1, 0x30F6   # ァ … ヶ
_KANA_SHIFT = 0x60
_FOLD_TABLE = {cp: cp - _KANA_SHIFT for cp in range(_KATAKANA_START, _KATAKANA_END + 1)}
_UNFOLD_TABLE = {cp - _KANA_SHIFT: cp for cp in range(_KATAKANA_START, _KATAKANA_END + 1)}
# A run of hiragana, the lengthening mark included (からおけ, はいぼーる).
KANA_RUN = table_pattern("reading", "kana_run")
# A few spellings that NFKC leaves apart but players use interchangeably.
_EXTRA = str.maketrans(mapping("reading", "spelled_alike"))
# The marks counted as kanji (人々, 〆切, 三ヶ月) and the lengthening mark, a katakana that carries no topic.
_KANJI_MARK = table_pattern("reading", "kanji_mark")
_LENGTHENING_MARK = table_pattern("reading", "lengthening_mark")


def is_kanji(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or _KANJI_MARK.fullmatch(ch) is not None


def is_hiragana(ch: str) -> bool:
    return "\u3041" <= ch <= "\u309f"


def is_katakana(ch: str) -> bool:
    return "\u30a0" <= ch <= "\u30ff"


def is_content_char(ch: str) -> bool:
    """Kanji, katakana, latin letters and digits: the characters that carry
    the topic of a Japanese sentence (hiragana mostly carries grammar)."""
    return is_kanji(ch) or (is_katakana(ch) and _LENGTHENING_MARK.fullmatch(ch) is None) or ch.isascii() and ch.isalnum()


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_EXTRA).lower()


def to_hiragana(text: str) -> str:
    return text.translate(_FOLD_TABLE)


def to_katakana(text: str) -> str:
    return text.translate(_UNFOLD_TABLE)


def fold(text: str) -> str:
    return to_hiragana(nfkc(text))


_PUNCT_RE = table_pattern("reading", "punctuation")


# Stage directions and laughter marks: what the player does or how they say it, not what they say —
# 「（笑）」「(小声)」「（一口食べて）」 in brackets, and a trailing 笑 / w / 爆笑 after a clause.
_ASIDE_RE = lazyre.compile(r"[（(][^（()）]{0,20}[)）]")
_LAUGH_RE = table_pattern("reading", "laughter_mark")
_ASIDE_OR_LAUGH_SIGN = table_pattern("reading", "aside_or_laugh_sign")


def without_asides(text: str) -> str:
    """The line without stage directions and laughter marks (「濃いめは困ります（笑）」 → 「濃いめは困ります」,
    「（一口食べて）ほんのり甘い」 → 「ほんのり甘い」); a line that is nothing else stays as it is."""
    if not _ASIDE_OR_LAUGH_SIGN.search(text):
        return text
    # (an aside between two clauses ends the first: 「見えます（笑）葵さんは…」 → 「見えます。葵さんは…」)
    cleaned = _LAUGH_RE.sub("\x00", _ASIDE_RE.sub("\x00", text))
    cleaned = re.sub(r"(?<=[、。，．,.!?！？…\s])\x00+|\x00+(?=[、。，．,.!?！？…\s]|$)|^\x00+", "", cleaned)
    cleaned = re.sub(r"\x00+", "。", cleaned).strip(" \u3000")
    return cleaned if strip_punctuation(cleaned) else text


def strip_punctuation(text: str) -> str:
    """The text without punctuation, brackets, spaces and trailing laughter
    marks (used to compare an input with an example)."""
    return _PUNCT_RE.sub("", nfkc(text))


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence of two short strings."""
    if not a or not b:
        return 0
    a, b = a[:400], b[:400]
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for ca in a:
        current = [0]
        for j, cb in enumerate(b):
            current.append(previous[j] + 1 if ca == cb else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class TextForms:
    """One input, normalised once.  ``nfkc`` and ``folded`` have the same
    length, so a position found in one is valid in the other."""
    raw: str
    nfkc: str
    folded: str

    @classmethod
    def of(cls, text: str) -> TextForms:
        n = nfkc(text)
        return cls(text, n, to_hiragana(n))

    def reading(self) -> Reading | None:
        """The whole input in hiragana (kanji read), with a map back to
        positions in ``nfkc``; None when no reading dictionary is installed."""
        return reading_of(self.nfkc)


# ---------------------------------------------------------------- readings (kanji ↔ kana)

@dataclass(frozen=True)
class Reading:
    text: str                      # hiragana reading
    origin: tuple[int, ...]        # for each reading character: start of its segment in the source
    origin_end: tuple[int, ...]    # … and the end of that segment


_KAKASI: object | None = None
_KAKASI_MISSING = False


def _kakasi():
    """pykakasi's converter, loaded on first use (its dictionary takes a
    moment to read); None when pykakasi is not installed."""
    global _KAKASI, _KAKASI_MISSING
    if _KAKASI is None and not _KAKASI_MISSING:
        try:
            import pykakasi
        except ImportError:
            _KAKASI_MISSING = True
            return None
        _KAKASI = pykakasi.kakasi()
    return _KAKASI


def readings_available() -> bool:
    from .ja import sudachi
    return sudachi.available() or _kakasi() is not None


# What the analyser reads a symbol as (！, ♪): such a token reads as itself.
_SYMBOL_READING = table_pattern("reading", "symbol_reading")


@lru_cache(maxsize=2048)
def reading_of(text: str) -> Reading | None:
    """The reading from the morphological analyser (SudachiPy) when it is
    installed, else from pykakasi; None when neither is."""
    from .ja import sudachi
    if sudachi.available():
        chars: list[str] = []
        origin: list[int] = []
        origin_end: list[int] = []
        for token in sudachi.analyse(text).tokens:
            # a symbol or an unknown word reads as itself
            reading = token.reading if token.reading and not _SYMBOL_READING.fullmatch(token.reading) else token.surface
            for ch in to_hiragana(reading):
                chars.append(ch)
                origin.append(token.start)
                origin_end.append(token.end)
        return Reading("".join(chars), tuple(origin), tuple(origin_end))
    return _kakasi_reading(text)


def _kakasi_reading(text: str) -> Reading | None:
    converter = _kakasi()
    if converter is None:
        return None
    chars: list[str] = []
    origin: list[int] = []
    origin_end: list[int] = []
    position = 0
    for segment in converter.convert(text):
        original = segment.get("orig", "")
        hira = to_hiragana(segment.get("hira", "") or original)
        found = text.find(original, position) if original else -1
        start = found if found >= 0 else position
        end = start + len(original)
        for ch in hira:
            chars.append(ch)
            origin.append(start)
            origin_end.append(end)
        position = max(position, end)
    return Reading("".join(chars), tuple(origin), tuple(origin_end))


@kept.table("text.word_reading")
def word_reading(word: str) -> str | None:
    """The hiragana reading of a listed word, or None without a dictionary.
    A single kanji read out of context is the dictionary's guess (撮 →
    つまみ), so its reading is kept only when the analyser reads that kana
    back as the same word (とびら → 扉)."""
    found = reading_of(word)
    if found is None:
        return None
    if len(word) == 1 and is_kanji(word):
        from .ja import sudachi
        if sudachi.available() and not any(t.normalised == word for t in sudachi.analyse(found.text).tokens):
            return None
    return found.text


# ---------------------------------------------------------------- word variants

# Godan verbs: the kana a stem can be followed by (mizen, ren'you, shuushi,
# katei, ishi, and the onbin of the te/ta forms).
_GODAN_ROWS = mapping("reading", "godan_rows")
# The ren'you (masu-stem) kana of each row: a listed 飲み also means 飲む, 飲んだ …
_I_ROW_TO_U = mapping("reading", "i_row_to_u")
# The e/i-row kana an ichidan stem ends in (変え-, かけ-, 起き-), and the endings of a listed word that decide its
# variants: 〜る, 〜い (an adjective), a te-form (流して).
_E_OR_I_ROW = table_pattern("reading", "e_or_i_row")
_RU_ENDING = table_pattern("reading", "ru_ending")
_I_ENDING = table_pattern("reading", "i_ending")
_TE_FORM_ENDING = table_pattern("reading", "te_form_ending")
_ADJECTIVE_ENDINGS = pattern("reading", "adjective_endings")
_TE_FORM_STEM_ENDINGS = pattern("reading", "te_form_stem_endings")
# Cross-script matching (word in katakana, input in hiragana or the other way)
# only for words of at least this many characters: a two-kana word such as
# ドア would otherwise be found inside ordinary hiragana (な「どあ」ります).
MIN_CROSS_SCRIPT = 3


def _esc(text: str) -> str:
    return re.escape(text)


_OKURIGANA = pattern("reading", "okurigana")


def _with_optional_okurigana(word: str) -> str:
    """Regex for `word` where okurigana between two kanji may be left out or
    written (入り口 ~ 入口, 貸し借り ~ 貸借り)."""
    out = []
    for i, ch in enumerate(word):
        if 0 < i < len(word) - 1 and is_hiragana(ch) and is_kanji(word[i - 1]) and is_kanji(word[i + 1]):
            out.append(_esc(ch) + "?")
        else:
            out.append(_esc(ch))
            if i < len(word) - 1 and is_kanji(ch) and is_kanji(word[i + 1]):
                out.append(f"{_OKURIGANA}?")
    return "".join(out)


def word_variants(word: str) -> list[str]:
    """Regex alternatives that stand for `word` in a normalised input: the
    word itself and its inflected forms.  `word` is already normalised."""
    alts = [_with_optional_okurigana(word)]
    if len(word) < 2:
        return alts
    last, stem = word[-1], word[:-1]
    stem_re = _with_optional_okurigana(stem)
    stem_has_kanji = any(is_kanji(c) for c in stem)
    verb_like = stem_has_kanji or len(word) >= 3
    if verb_like and last in _GODAN_ROWS:
        alts.append(stem_re + "[" + _GODAN_ROWS[last] + "]")
        if _RU_ENDING.search(word) and (is_kanji(stem[-1]) or _E_OR_I_ROW.fullmatch(stem[-1])):
            # ichidan (変える → 変え-, かける → かけ-); a godan 〜る is covered above
            alts.append(stem_re)
    if _I_ENDING.search(word) and is_kanji(stem[-1]):
        alts.append(stem_re + _ADJECTIVE_ENDINGS)
    if last in _I_ROW_TO_U and is_kanji(stem[-1]) and not _noun_of_its_own(word):
        alts.append(stem_re + "[" + _GODAN_ROWS[_I_ROW_TO_U[last]] + "]")
    if _TE_FORM_ENDING.search(word) and len(word) >= 3 and stem_has_kanji:
        # a listed te-form stands for the whole verb: 流して → 流さ/流し/流す …
        core = word[:-2]
        if is_kanji(core[-1]):
            alts.append(_with_optional_okurigana(core) + _TE_FORM_STEM_ENDINGS)
    # longest first so the hit covers the most text
    return sorted(set(alts), key=len, reverse=True)


def _noun_of_its_own(word: str) -> bool:
    """Whether the analyser's dictionary holds a verb's stem as a noun of its own (売り: a selling point, 休み,
    帰り): the author listed the noun, and the verb's forms (売っちゃう) are another word.  A stem it reads as
    the verb (飲み, 話し) stands for the verb."""
    from .ja import analyse
    tokens = analyse(word).tokens
    return len(tokens) == 1 and tokens[0].is_noun


@kept.table("text.variant_source")
def variant_source(word: str) -> str:
    """One pattern of `word`'s forms (word_variants), longest first."""
    return "|".join(word_variants(word))


@dataclass(frozen=True)
class WordHit:
    word: str        # the listed word
    start: int       # position in the normalised input
    end: int
    exact: bool      # the listed spelling itself (not a variant)


# A reading is matched only when it is this long (うた, あか would be found
# inside unrelated words) and only across scripts: the listed word has kanji
# and the player wrote kana there (おんがく), or the other way (掛ける).
MIN_READING = 3


class _CompiledWord:
    """One listed word, ready to be found: its patterns are compiled on first use, and only for a text that
    holds the characters every form of the word holds — a new process meets a scenario's thousand
    words on its first turn, and compiling them all cost more than the rest of the turn."""
    __slots__ = ("word", "source", "_pattern", "cross_script", "spelling", "reading_source", "_reading_pattern",
                 "has_kanji", "prefilter", "_negated", "variant", "required", "reading_required")

    def __init__(self, word: str, variant: bool, readings: bool) -> None:
        self.word = word
        normalised = nfkc(word)
        self.variant = variant
        self.cross_script = variant and len(normalised) >= MIN_CROSS_SCRIPT
        self.spelling = to_hiragana(normalised) if self.cross_script else normalised
        # (every alternative starts with the word's first character, written as it is: _with_optional_okurigana)
        self.source = variant_source(self.spelling) if variant else _esc(normalised)
        self.required = _held_by_every_form(self.spelling)
        self.reading_required = ""
        self._pattern: re.Pattern[str] | None = None
        self.has_kanji = any(is_kanji(c) for c in normalised)
        self.reading_source: str | None = None
        self._reading_pattern: re.Pattern[str] | None = None
        self.prefilter = None
        # a verb's negation (変えな, 変えず): any negated form of that verb (変わらずに, 変わりません); found lazily
        self._negated: str | None | bool = False
        if variant and readings:
            reading = word_reading(normalised) if self.has_kanji else to_hiragana(normalised)
            # (one kanji alone, read in two kana, is no word to find by its sound: 壊 read かい is in every 「…かい？」;
            # 扉 read とびら still is)
            if reading and len(reading) >= MIN_READING and (self.has_kanji or readings_available()) and \
                    not (self.has_kanji and len(normalised) == 1 and len(reading) < 3):
                self.reading_source = variant_source(reading)
                self.reading_required = _held_by_every_form(reading)
                if not self.has_kanji:
                    # a kana word written with a kanji: its second kana follows a kanji (掛け for かける)
                    self.prefilter = reading[1]

    def matches(self, text: str) -> Iterator[re.Match[str]]:
        if not self.spelling or not all(c in text for c in self.required):
            return iter(())
        if self._pattern is None:
            self._pattern = re.compile(self.source)
        return self._pattern.finditer(text)

    def _reading_matches(self, text: str) -> Iterator[re.Match[str]]:
        assert self.reading_source is not None
        if not all(c in text for c in self.reading_required):
            return iter(())
        if self._reading_pattern is None:
            self._reading_pattern = re.compile(self.reading_source)
        return self._reading_pattern.finditer(text)

    @property
    def negated(self) -> str | None:
        if self._negated is False:
            from .negated import negated_verb
            self._negated = negated_verb(nfkc(self.word)) if self.variant else None
        return self._negated  # type: ignore[return-value]

    def negation_hits(self, forms: TextForms) -> list[tuple[int, int]]:
        if self.negated is None:
            return []
        from .negated import negation_spans
        return negation_spans(forms.nfkc, self.negated)

    def reading_hits(self, forms: TextForms) -> list[tuple[int, int]]:
        if self.reading_source is None:
            return []
        out = []
        if self.has_kanji:
            # the player wrote the word in kana (おんがく): its reading, in a span without kanji, where a word of
            # the line starts (the たかい inside あったかい is no 高い)
            for m in self._reading_matches(forms.folded):
                if not any(is_kanji(c) for c in forms.nfkc[m.start():m.end()]) and \
                        _word_starts_at(forms, m.start()) and not _another_verb_at(forms, m.start(), self.word):
                    out.append((m.start(), m.end()))
            return out
        if self.prefilter is None or not _after_kanji(forms.nfkc, self.prefilter):
            return out
        reading = forms.reading()
        if reading is None or not reading.text:
            return out
        for m in self._reading_matches(reading.text):
            start = reading.origin[m.start()]
            end = reading.origin_end[m.end() - 1]
            if m.end() < len(reading.text) and reading.origin_end[m.end()] == end and \
                    _other_word_at(forms, start, self.spelling):
                continue          # ends inside the reading of a longer word: the かけ of 掛け持ち is no かける
            if any(is_kanji(c) for c in forms.nfkc[start:end]):     # in kana the plain match covers it
                out.append((start, end))
        return out


def _word_starts_at(forms: TextForms, at: int) -> bool:
    """Whether the analyser starts a word at `at` of the text (True without an analyser), or a noun it reads
    with an honorific prefix (おやすみ: the word 休み starts after お)."""
    from .ja import analyse
    tokens = analyse(forms.nfkc).tokens
    # (not a particle or an ending: the かい of 「颯太かい？」 is no 壊)
    return not tokens or any((token.start == at or token.start + token.prefix == at) and
                             not token.is_function for token in tokens)


def _another_verb_at(forms: TextForms, at: int, word: str) -> bool:
    """Whether the analyser reads the kana at `at` as a verb of another dictionary form than the listed verb
    `word`: kana that sound alike in a conjugated form are read as the analyser reads them (the あって of
    「温泉あってよ」 is ある, not 会う of 会ってる)."""
    from .ja import analyse
    analysis = analyse(forms.nfkc)
    index = analysis.index_at(at)
    if index is None or not analysis.tokens[index].is_verb:
        return False
    listed = next((t for t in analyse(nfkc(word)).tokens if t.is_verb), None)
    if listed is None:
        return False
    return _lemma_kana(analysis.tokens[index].lemma) != _lemma_kana(listed.lemma)


def _lemma_kana(lemma: str) -> str:
    return to_hiragana(word_reading(lemma) or lemma) if any(is_kanji(c) for c in lemma) else to_hiragana(lemma)


def _other_word_at(forms: TextForms, at: int, word: str) -> bool:
    """Whether the analyser reads the word at `at` of the text as another word than `word` (in kana): a noun
    (掛け持ち), or a verb of another dictionary form (掛け持つ) — not a form of `word` itself (掛けよう)."""
    from .ja import analyse
    analysis = analyse(forms.nfkc)
    index = analysis.index_at(at)
    if index is None:
        return False
    token = analysis.tokens[index]
    return token.is_noun or to_hiragana(word_reading(token.lemma) or token.lemma) != to_hiragana(word)


def _after_kanji(text: str, kana: str) -> bool:
    """Whether ``kana`` occurs right after a kanji in ``text`` (a plain scan: a
    regex per word cost more to compile, in every new process, than it saved)."""
    at = text.find(kana, 1)
    while at > 0:
        if is_kanji(text[at - 1]):
            return True
        at = text.find(kana, at + 1)
    return False


def _held_by_every_form(word: str) -> str:
    """The characters every form of `word` (word_variants) holds, as a cheap test before its pattern: all but
    its last two (a stem's ending varies), less a kana that may be left out between kanji (入り口 ~ 入口)."""
    core = word[:-2] if len(word) > 2 else word[:1]
    return "".join(dict.fromkeys(
        c for i, c in enumerate(core)
        if not (is_hiragana(c) and 0 < i < len(word) - 1 and is_kanji(word[i - 1]) and is_kanji(word[i + 1]))))


def prepare_words(words: Iterable[str]) -> None:
    """Derives now what finding each word takes (its forms' pattern, its reading), where a scenario's build
    records what it derives (kept.py): a new instance then reads it instead of deriving it on its first turn."""
    if kept.is_recording():
        for word in words:
            if word.strip():
                _CompiledWord(word, True, True)


class WordMatcher:
    """Variant-aware word matching.  Compiled words are cached, so a scenario's
    words are compiled once however often they are matched.  With
    ``readings`` (and pykakasi installed) a word also matches where the
    player wrote it in the other script: 音楽 ~ おんがく, かける ~ 掛ける."""
    variant = True

    def __init__(self, readings: bool = True) -> None:
        self.readings = readings and self.variant
        self._cache: dict[tuple[str, ...], tuple[_CompiledWord, ...]] = {}

    def _compiled(self, words: Sequence[str]) -> tuple[_CompiledWord, ...]:
        key = tuple(words)
        found = self._cache.get(key)
        if found is None:
            found = tuple(_CompiledWord(w, self.variant, self.readings) for w in key if w.strip())
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = found
        return found

    def hits(self, forms: TextForms, words: Sequence[str]) -> list[WordHit]:
        out = []
        for compiled in self._compiled(words):
            text = forms.folded if compiled.cross_script else forms.nfkc
            for m in compiled.matches(text):
                out.append(WordHit(compiled.word, m.start(), m.end(), m.group(0) == compiled.spelling))
            for start, end in compiled.reading_hits(forms):
                out.append(WordHit(compiled.word, start, end, False))
            for start, end in compiled.negation_hits(forms):
                out.append(WordHit(compiled.word, start, end, False))
        seen: set[tuple[str, int, int]] = set()
        unique = []
        for hit in out:
            key = (hit.word, hit.start, hit.end)
            if key not in seen:
                seen.add(key)
                unique.append(hit)
        return unique

    def allows(self, text: str | TextForms, words: Sequence[str]) -> bool:
        """The article's rule: no words, or at least one of them occurs."""
        if not words:
            return True
        forms = text if isinstance(text, TextForms) else TextForms.of(text)
        compiled_words = self._compiled(words)
        for compiled in compiled_words:
            source = forms.folded if compiled.cross_script else forms.nfkc
            if next(compiled.matches(source), None) is not None:
                return True
        return any(compiled.reading_hits(forms) or compiled.negation_hits(forms) for compiled in compiled_words)


class PlainMatcher(WordMatcher):
    """Raw substring matching, as in the source article (``text.contains``);
    kept to measure what variant matching gains."""
    variant = False

    def hits(self, forms: TextForms, words: Sequence[str]) -> list[WordHit]:
        out = []
        for word in words:
            if not word:
                continue
            start = forms.raw.find(word)
            while start >= 0:
                out.append(WordHit(word, start, start + len(word), True))
                start = forms.raw.find(word, start + 1)
        return out

    def allows(self, text: str | TextForms, words: Sequence[str]) -> bool:
        raw = text.raw if isinstance(text, TextForms) else text
        return not words or any(w in raw for w in words)


def make_matcher(variant: bool = True, readings: bool = True) -> WordMatcher:
    return WordMatcher(readings) if variant else PlainMatcher(False)


def find_names(text: str, names: Iterable[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping occurrences of any of `names` in normalised `text`,
    longest names first: (start, end, name)."""
    taken: list[tuple[int, int, str]] = []
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        target = nfkc(name)
        start = text.find(target)
        while start >= 0:
            end = start + len(target)
            if all(end <= s or start >= e for s, e, _ in taken):
                taken.append((start, end, name))
            start = text.find(target, start + 1)
    return sorted(taken)
