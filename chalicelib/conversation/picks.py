"""The player picking one of the options a character just asked about (「カウンターのと、赤いドアのと、どっち？」).

A character's question asks which when its last sentence holds どっち, どちら, どれ, どの or いずれ.  Its options
are, for any scenario:

- the knowledge entries of the one who asked that share a `choice` (choices.py) still open — their condition
  holds and none was said — when the question names a word of one of them;
- the things the question line lists: 「XのとYの」「XとY、どっち」「XかYか」「Xか、それともY」「A、B、Cのどれ」
  (in the sentence that asks, else the one before it).  A listed option that shares words with a choice entry
  is that entry: the words of both name it (正面 from 「赤いドアを正面から撮ったの」 names the door entry).

An option is named by any word of its own — a noun or adjective that no other option shares (写真, shared by
both, names neither) — or by order where the question lists them (一枚目, 二つ目, 最初の, 後の, 前者, 後者, 左, 右,
後から見せてくれた方).  The next line picks an option when it names that one alone (one named before より or
じゃなくて is passed over: 「カウンターよりドア」; of two either side of けど or から, the later: 「ドアもいいけど
カウンターかな」), asks nothing (an opinion put as a question, 「ドアがいいんじゃない？」, does not ask), and
either chooses (〜にします, 〜で決定, 〜を選ぶ, 〜のほうが好き, 〜がいい) or is just the option (「ドアで！」
「二枚目の方です」).  A line naming both, or neither, picks nothing; nor does a line
that says something else of an option (「ドアって自分で塗ったの？」「ドアの写真、今度撮り直しましょうか」).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .. import lazyre
from ..interpret.asking import WH, is_question
from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG, Token
from ..interpret.lexicon import compiled, pattern, word_class
from ..interpret.text import nfkc
from ..scenario.loader import CompiledKnowledge
from .choices import CHOOSING as _CHOOSING
from .choices import chosen
from .questions import asks, last_sentence

# The word that asks which (not どっちも / どれも / どちらでも: both, any).
_WHICH = compiled("picks", "which")
_NOT_WHICH = compiled("picks", "not_which")
_SENTENCE = lazyre.compile(r"[^。！？!?]*[。！？!?]+|[^。！？!?]+$")
# Nouns that name no thing of their own (the ほう of ドアのほう, the やつ of カウンターのやつ).
_FORMAL = compiled("picks", "formal_noun")
# Adjectives that judge (いい, すごい) rather than tell options apart (赤い).
_JUDGING = compiled("picks", "judging")
# A sentence that gives a reason or passes on what was said (「…って言ってたし」「…だから」), after the pick
_REASON = compiled("picks", "reason_after_pick")
# 「演歌で決まりでいい？」「それで決定ね？」: an option settled by asking to settle it (named in the sentence or the
# one before)
_PICK_CONFIRMED = compiled("picks", "pick_confirmed")
# After an option named: passed over (「カウンターよりドア」「カウンターじゃなくてドア」「カウンターはちょっと」).
_PASSED_OVER = compiled("picks", "passed_over")
# Where a sentence turns from one option to another (「ドアもいいけど、カウンターかな」).
_TURN = compiled("picks", "turn")
# Turning an option down, said of the one option named (「ドアはやめとく」): no pick.
_REJECTING = compiled("picks", "rejecting")
# An opinion put as a question (「ドアがいいんじゃない？」「ドアかな？」): it answers, it does not ask.
_OPINION_ASKED = compiled("picks", "opinion_asked")
# By order, where the question lists its options in order.
_FIRST = compiled("picks", "first")
_SECOND = compiled("picks", "second")
_THIRD = compiled("picks", "third")
_LATTER = compiled("picks", "latter")
# Words a line that is just the option may hold besides it (やっぱり, 断然, 私は … です).
_FILLER = compiled("picks", "filler")
# The rest of a noun phrase after the word that names an option (赤い|ドア).
_PHRASE_REST = lazyre.compile(f"(?:{pattern('picks', 'noun_run')})?")
# Cutting a question's line into the options it lists.
_OR_ELSE = compiled("picks", "or_else")
_LIST_AND = compiled("picks", "list_and")
_NOT_A_LIST_AFTER_TO = compiled("picks", "not_a_list_after_to")
_LIST_OR = compiled("picks", "list_or")
_LINKING_NO = compiled("picks", "linking_no")
_BARE_LIST_SEPARATOR = compiled("picks", "bare_list_separator")
_BARE_LIST_END = lazyre.compile(pattern("picks", "bare_list_no") + r"?[、,\s]*$")
_LEAD_IN_CUT = compiled("picks", "lead_in_cut")
_LAST_OPTION_TAIL = lazyre.compile(rf"(?:{pattern('picks', 'last_option_particle')})?"
                                   rf"(?:{pattern('picks', 'last_option_condition')})?[、,\s]*$")
_LAST_OPTION_THERE_IS = compiled("picks", "last_option_there_is")
_OPTION_POS = (TAG.noun, TAG.adjective, TAG.adjectival_noun)


@dataclass(frozen=True)
class Option:
    """One option of the question: the words that name it, and the entry that settles it, if one."""
    label: str
    words: frozenset[str]
    entry: CompiledKnowledge | None = None


@dataclass(frozen=True)
class Asked:
    """A question that asks which: its options in the order it names them, and the words every option
    shares (or the question says around them), which name none."""
    options: tuple[Option, ...]
    frame: frozenset[str]
    ordered: bool

    def to_dict(self) -> dict:
        return {"options": [o.label for o in self.options]}


def asks_which(text: str) -> bool:
    """Whether a character's line asks which of some options (「どっちがいいと思う？」「どれにする？」)."""
    sentence = last_sentence(nfkc(text))
    return asks(text) and bool(_WHICH.search(sentence)) and not _NOT_WHICH.search(sentence)


def options_asked(text: str, entries: Iterable[CompiledKnowledge] = (), shown=None,
                  state=None) -> Asked | None:
    """The options a character's question asks the player to pick from, or None when it asks no which or
    names fewer than two.  `entries`: the asker's knowledge entries (those sharing an open `choice` are
    options); `shown` and `state`: the game's, to tell which choices are open."""
    if not asks_which(text):
        return None
    normalised = nfkc(text)
    listed = _listed(normalised)
    choice = _open_choice(normalised, entries, shown, state, listed)
    if choice is None and len(listed) < 2:
        return None
    question_words = {w for t in _tokens(normalised) for w in _forms(t) if _option_word(t)}
    if choice is None:
        options = [Option(label, frozenset(words)) for label, words in listed]
        ordered = True
    else:
        options, ordered = _with_entries(normalised, choice, listed)
    # a word two options share (写真) names neither
    counts: dict[str, int] = {}
    for option in options:
        for word in option.words:
            counts[word] = counts.get(word, 0) + 1
    shared = {w for w, n in counts.items() if n > 1}
    options = [Option(o.label, o.words - shared, o.entry) for o in options]
    if len(options) < 2 or any(not o.words for o in options):
        return None
    own = set().union(*(o.words for o in options))
    return Asked(tuple(options), frozenset((question_words | shared) - own), ordered)


def open_choices(entries: Iterable[CompiledKnowledge], shown, state) -> list[Asked]:
    """Every open choice of these entries (options whose condition holds, none said yet), as if a question
    had asked which: a line that chooses one by its own words picks it (「赤富士にしよう」) whatever topic the
    line was read as, whenever it is said."""
    groups: dict[str, list[CompiledKnowledge]] = {}
    all_entries = list(entries)
    for entry in all_entries:
        if entry.entry.choice is not None and entry.condition.holds_for_intent(shown):
            groups.setdefault(entry.entry.choice, []).append(entry)
    found = []
    for name, group in groups.items():
        if len(group) < 2 or chosen(all_entries, state, name) is not None:
            continue
        vocab = [_entry_words(e) for e in group]
        shared = set.intersection(*vocab)
        options = tuple(Option(e.entry.info, frozenset(v - shared), e) for e, v in zip(group, vocab, strict=True))
        if all(o.words for o in options):
            found.append(Asked(options, frozenset(shared), ordered=False))
    return found


def chooses(text: str) -> bool:
    """Whether the line says which is taken (〜にします, 〜がいい, 〜で決定), not just names a thing."""
    return bool(_CHOOSING.search(nfkc(text)))


def picked(text: str, asked: Asked) -> Option | None:
    """The option the player's line picks, or None (it names both or neither, asks, or says something else
    of the one it names)."""
    normalised = nfkc(text).strip()
    if not normalised:
        return None
    named: set[int] = set()
    choosing = False
    for sentence in (s.strip() for s in _SENTENCE.findall(normalised)):
        if not sentence.strip(" 　…。、"):
            continue
        found, passed, spans = _named(sentence, asked)
        if len(found - passed) > 1 and (turned := _turned(sentence, asked)) is not None:
            found, passed, spans = turned
        if not found:
            # 「カウンターはちょっと。」 then the pick; 「ドアの写真で！決定です」: the choosing after it
            # (「…カウンターの写真。それで決まりでいい？」: a pick confirmed by a question chooses too)
            choosing = choosing or ((not _asks(sentence) or bool(_PICK_CONFIRMED.search(sentence))) and
                                    bool(_CHOOSING.search(sentence)))
            continue
        confirmed = bool(_PICK_CONFIRMED.search(sentence))    # 「じゃあ演歌で決まりでいい？」 asks to settle it
        if _asks(sentence) and not confirmed:
            return None             # 「ドアって自分で塗ったの？」
        if named and _REASON.search(sentence):
            continue                # 「カウンターのほうがいい。ドアは怖いって言ってたし」: a reason, no second pick
        if found - passed and _REJECTING.search(_without(sentence, spans)) and not _CHOOSING.search(sentence):
            return None             # 「ドアはやめとく」
        named |= found - passed
        # (one passed over for another is a choice made: 「カウンターじゃなくてドア」)
        # (an opinion put as a question chooses too: 「ブルースじゃない？」)
        choosing = choosing or confirmed or bool(passed - found and found - passed) or \
            bool(_OPINION_ASKED.search(sentence)) or bool(_CHOOSING.search(_without(sentence, spans))) or \
            _just_option(sentence, spans, asked)
    if len(named) != 1 or not choosing:
        return None
    return asked.options[named.pop()]


# ---------------------------------------------------------------- the player's line


def _asks(sentence: str) -> bool:
    return is_question(sentence) and not (_OPINION_ASKED.search(sentence) and not WH.search(sentence))


def _named(sentence: str, asked: Asked) -> tuple[set[int], set[int], list[tuple[int, int]]]:
    """The options a sentence names, those it passes over (named before より, じゃなくて), and the spans that
    name them."""
    found: set[int] = set()
    passed: set[int] = set()
    spans: list[tuple[int, int]] = []
    count = len(asked.options)
    if asked.ordered:
        for pattern, index in ((_FIRST, 0), (_SECOND, 1), (_THIRD, 2), (_LATTER, count - 1)):
            for m in pattern.finditer(sentence):
                if index < count:
                    spans.append((m.start(), m.end()))
                    (passed if _PASSED_OVER.match(sentence[m.end():]) else found).add(index)
    for token in _tokens(sentence):
        if not _option_word(token):
            continue
        forms = set(_forms(token))
        for index, option in enumerate(asked.options):
            if forms & option.words:
                spans.append((token.start, token.end))
                (passed if _PASSED_OVER.match(sentence[_phrase_end(sentence, token.end):]) else found).add(index)
    for index, option in enumerate(asked.options):
        for word in option.words:
            if len(word) >= 2 and index not in found | passed:
                at = sentence.find(word)
                if at >= 0 and not any(s <= at < e for s, e in spans):
                    spans.append((at, at + len(word)))
                    (passed if _PASSED_OVER.match(sentence[at + len(word):]) else found).add(index)
    return found, passed, spans


def _turned(sentence: str, asked: Asked) -> tuple[set[int], set[int], list[tuple[int, int]]] | None:
    """「ドアもいいけどカウンターかな」「ドアは怖いからカウンターで」: of two options named either side of けど or
    から, the one after is taken (when it alone is named there); None when the sentence does not turn so."""
    for m in _TURN.finditer(sentence):
        before, _, _ = _named(sentence[:m.start()], asked)
        after, passed, spans = _named(sentence[m.end():], asked)
        if len(after - passed) == 1 and before and not before & after:
            return after - passed, before | passed, [(s + m.end(), e + m.end()) for s, e in spans]
    return None


def _phrase_end(sentence: str, end: int) -> int:
    """Past the rest of a noun phrase (赤い|ドア, カウンター|の写真 is the same option)."""
    m = _PHRASE_REST.match(sentence[end:])
    return end + (m.end() if m else 0)


def _without(sentence: str, spans: Sequence[tuple[int, int]]) -> str:
    chars = list(sentence)
    for start, end in spans:
        for i in range(start, min(end, len(chars))):
            chars[i] = "X"
    return "".join(chars)


def _just_option(sentence: str, spans: Sequence[tuple[int, int]], asked: Asked) -> bool:
    """Whether the sentence says nothing but the option (「ドアで！」「やっぱり二枚目の方です」)."""
    for token in _tokens(sentence):
        if any(s <= token.start < e or s < token.end <= e for s, e in spans):
            continue
        if not token.pos or token.pos[0] in (TAG.particle, TAG.auxiliary, TAG.supplementary_symbol, TAG.blank, TAG.interjection, TAG.pronoun, TAG.prefix,
                                             TAG.suffix, TAG.adnominal, TAG.symbol, TAG.conjunction):
            continue
        forms = set(_forms(token))
        if forms & asked.frame or _any_word(_FORMAL, forms) or _any_word(_FILLER, forms) or \
                token.pos[:2] == (TAG.noun, TAG.numeral):
            continue
        if any(forms & o.words for o in asked.options):
            continue
        return False
    return True


# ---------------------------------------------------------------- the question


def _listed(text: str) -> list[tuple[str, set[str]]]:
    """The options a question line lists (「XのとYの。どっち？」「XとY、どっち？」「XかYか」), each with its words."""
    sentences = [s for s in _SENTENCE.findall(text) if s.strip(" 　…")]
    if not sentences:
        return []
    asking = len(sentences) - 1
    m = _WHICH.search(sentences[asking])
    spans = [(sentences[asking][:m.start()] if m else sentences[asking], True)]
    if asking > 0:
        spans.append((sentences[asking - 1], False))
    for span, bare in spans:
        found = _split(span, bare)
        if len(found) >= 2:
            return found
    return []


def _split(span: str, bare: bool = False) -> list[tuple[str, set[str]]]:
    """`bare`: the span ends where the question asks which, so a bare list (「A、B、Cのどれ」) lists options."""
    span = _OR_ELSE.sub("|", span)
    tokens = _tokens(span)
    cuts: list[tuple[int, int]] = []
    for i, token in enumerate(tokens):
        before = tokens[i - 1] if i > 0 else None
        after = next((t for t in tokens[i + 1:] if t.pos and t.pos[0] not in (TAG.supplementary_symbol, TAG.blank)), None)
        if before is None or after is None:
            continue
        joins_nouns = (before.pos[0] in (TAG.noun, TAG.suffix) or bool(_LINKING_NO.fullmatch(before.surface))) and \
            after.pos[0] in (TAG.noun, TAG.adjective, TAG.adjectival_noun, TAG.prefix, TAG.adnominal, TAG.pronoun, TAG.verb)
        if _LIST_AND.fullmatch(token.surface) and token.pos[:2] == (TAG.particle, TAG.case_particle) and joins_nouns and \
                not _NOT_A_LIST_AFTER_TO.fullmatch(after.lemma):
            cuts.append((token.start, token.end))
        elif _LIST_OR.fullmatch(token.surface) and token.pos[:2] == (TAG.particle, TAG.adverbial_particle) and joins_nouns:
            cuts.append((token.start, token.end))
    pieces: list[str] = []
    start = 0
    for s, e in cuts:
        pieces.append(span[start:s])
        start = e
    pieces.append(span[start:])
    pieces = [p for chunk in pieces for p in chunk.split("|")]
    if len(pieces) < 2:
        # 「ナポリタン、おでん、カレー、どれにする？」: a bare list before the word that asks
        listed = [p for p in _BARE_LIST_SEPARATOR.split(_BARE_LIST_END.sub("", span)) if p.strip()]
        if bare and len(listed) >= 2 and all(len(p.strip()) <= 12 and all(
                t.pos and t.pos[0] in (TAG.noun, TAG.prefix, TAG.suffix, TAG.supplementary_symbol, TAG.blank) for t in _tokens(p.strip()))
                for p in listed):
            pieces = listed
        else:
            return []
    # the first option starts after what the question says before it (「ねえ、お店の写真なんだけど、Xのと…」)
    pieces[0] = _LEAD_IN_CUT.split(pieces[0])[-1]
    # (nor is what it is about one's own word: the 包み紙 of 「包み紙は生成りと紺があるけど」 is both options')
    markers = word_class("topic_markers").entries
    topic_end = max((t.end for t in _tokens(pieces[0]) if t.pos[:1] == (TAG.particle,) and t.surface in markers), default=0)
    if 0 < topic_end < len(pieces[0].rstrip()):
        pieces[0] = pieces[0][topic_end:]
    pieces[-1] = _LAST_OPTION_TAIL.sub("", pieces[-1])
    pieces[-1] = _LAST_OPTION_THERE_IS.sub("", pieces[-1])   # 「…と紺の傘がある。」
    found = []
    for piece in pieces:
        words = {w for t in _tokens(piece) if _option_word(t) for w in _forms(t)}
        if not words:
            return []
        found.append((piece.strip(" 、,。！？!?"), words))
    return found


def _open_choice(text: str, entries: Iterable[CompiledKnowledge], shown, state,
                 listed: Sequence[tuple[str, set[str]]]) -> list[CompiledKnowledge] | None:
    """The options of an open choice (entries sharing a `choice` whose condition holds, none said yet) that the
    question names a word of, else None."""
    groups: dict[str, list[CompiledKnowledge]] = {}
    all_entries = list(entries)
    for entry in all_entries:
        if entry.entry.choice is not None and (shown is None or entry.condition.holds_for_intent(shown)):
            groups.setdefault(entry.entry.choice, []).append(entry)
    asked_words = {w for t in _tokens(text) if _option_word(t) for w in _forms(t)}
    asked_words |= {w for _, words in listed for w in words}
    for name, group in groups.items():
        if len(group) < 2:
            continue
        if state is not None and chosen(all_entries, state, name) is not None:
            continue
        vocab = [_entry_words(e) for e in group]
        shared = set.intersection(*vocab) if vocab else set()
        if any((words - shared) & asked_words for words in vocab):
            return group
    return None


def _with_entries(text: str, group: Sequence[CompiledKnowledge],
                  listed: Sequence[tuple[str, set[str]]]) -> tuple[list[Option], bool]:
    """The options of a choice, each with the words of the listed option that shares most with it; in the
    order the question lists them (else the order it names them in)."""
    vocab = [_entry_words(e) for e in group]
    shared = set.intersection(*vocab)
    taken: dict[int, int] = {}
    for li, (_, words) in enumerate(listed):
        scores = [len((v - shared) & words) for v in vocab]
        best = max(range(len(group)), key=lambda i: scores[i])
        if scores[best] > 0 and best not in taken.values():
            taken[li] = best
    options: list[tuple[int, Option]] = []
    mentioned = True
    for gi, entry in enumerate(group):
        place = next((li for li, g in taken.items() if g == gi), None)
        if place is not None:
            words = set(vocab[gi]) | set(listed[place][1])
            options.append((place, Option(listed[place][0], frozenset(words), entry)))
            continue
        # not listed: placed where the question first names a word of it (after those listed)
        at = [text.find(w) for w in vocab[gi] - shared if w in text]
        mentioned = mentioned and bool(at)
        order = len(listed) + (min(at) if at else len(text) + gi)
        options.append((order, Option(entry.entry.info, frozenset(vocab[gi]), entry)))
    options.sort(key=lambda pair: pair[0])
    ordered = len(taken) == len(group) or (not taken and mentioned)
    return [o for _, o in options], ordered


@lru_cache(maxsize=512)
def _entry_words_of(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for word in words for t in _tokens(nfkc(word)) if _option_word(t) for w in _forms(t))


def _entry_words(entry: CompiledKnowledge) -> set[str]:
    return set(_entry_words_of(tuple(entry.entry.words)))


# ---------------------------------------------------------------- words


@lru_cache(maxsize=1024)
def _tokens(text: str) -> tuple[Token, ...]:
    return analyse(text).tokens


def _forms(token: Token) -> tuple[str, ...]:
    return tuple(dict.fromkeys((token.surface, token.lemma, token.normalised)))


def _option_word(token: Token) -> bool:
    """A noun or adjective that can tell one option from another (not ほう, やつ, いい, a number)."""
    if not token.pos or token.pos[0] not in _OPTION_POS:
        return False
    if token.pos[:2] == (TAG.noun, TAG.numeral) or (len(token.pos) > 1 and token.pos[1] in (TAG.may_be_dependent, TAG.auxiliary_stem)):
        return False
    forms = set(_forms(token))
    return not (_any_word(_FORMAL, forms) or _any_word(_JUDGING, forms))


def _any_word(words: re.Pattern[str], forms: Iterable[str]) -> bool:
    """Whether any of a token's forms is a whole word of `words` (a pattern of the picks table)."""
    return any(words.fullmatch(form) for form in forms)
