"""What a player's line asks about: whom, what, and what it takes back.

A topic word anywhere in a line is weak evidence of what the line is about.  「ママのお名前は？」 names 名前,
a word of the shop's name, but asks for ママ's name; 「今かかってるの誰の曲？」 names 曲, a music word, and asks
whose song is playing.  This module reads the line's grammar (SudachiPy tokens, no model) for:

- **who** it is about: characters named as the topic or owner (ママの, 葵ちゃんって, ママと葵ちゃんは, お二人は),
  not a name called at the head (「ママ、…」 calls ママ, the one who answers); or the one asked, when a question
  names nobody and no thing owns what it asks for (「お名前は？」);
- **a thing** that owns what it asks for (店の名前, この曲の…): then it is not about a person;
- **the head**: the noun the question ends on (名前, 曲, 酒 of 「ママが好きなお酒は？」) — the word a fitting answer
  must be about;
- **what it takes back**: 「店の名前じゃなくて、ママ自身の名前！」, 「カラオケの話してないって」: the part before
  じゃなくて / の話してない is not what the player means, and is set aside;
- **a vague reference**: 「あれってどうなったの？」「例の件は？」 name nothing but a pointer to something said;
- **parts**: a line that does two things (「ビールください。あとトイレどこ？」) is read part by part.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..interpret.asking import is_question
from ..interpret.cues import SceneNames
from ..interpret.dialect import standard
from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG, Token
from ..interpret.lexicon import compiled, listed, word_class
from ..interpret.text import find_names, is_kanji, nfkc

# 「AじゃなくてB」「Aの話してない」「Aはやめとけ」「初めてじゃないぞ」: A is taken back (turned down).
_TAKEN_BACK = compiled("corrections", "taken_back")
# A call at the head: 「ママ、」「ねえ葵ちゃん！」 (the name then answers, it is not what the line is about).
_CALL_AFTER = compiled("focus", "call_after")
_CALL_BEFORE = compiled("focus", "call_before")
# Whose view is asked: 「葵から見て」「葵的には」「葵はどう思う」「ママだったら、こういう時どうします？」.
_ASKED_AFTER = compiled("focus", "asked_after")
# Second person: the one spoken to.
_YOU = compiled("focus", "you")
# Both characters present.
_BOTH = compiled("focus", "both")
# Pointers to something said, and words that say nothing besides (one noun, matched whole).
_VAGUE = compiled("focus", "vague")
_VAGUE_EMPTY = compiled("focus", "vague_empty")
_WH = compiled("focus", "wh")
_REQUEST = compiled("focus", "request")
# Where a line turns to a second thing (「ビールください。あと、トイレどこ？」「乾杯！ところで…」).
_PART_BREAK = compiled("focus", "part_break")
# Nouns of time: a frame set up as the topic (休みの日は, 夜は), not a thing the question is about.
_TIMES = compiled("focus", "times")
# People named by a common noun (not a thing the line is about).
_PERSONS = compiled("focus", "persons")
# People who are not here to answer for themselves: a question about one of them (「その常連さん、お名前は？」) is
# not about the one asked.
_THIRD = compiled("focus", "third")
# A name owned by someone not here or another place (先代のママ, 隣の店のママ, 友達のママ) is not the character.
_OTHER_OWNER = compiled("focus", "other_owner")
_THIRD_AFTER = compiled("focus", "third_after")
_CALLED_THIRD = compiled("focus", "called_third")
# Heads that say little by themselves: what modifies them is what is asked (何してる人, どんな子).
_LIGHT_HEADS = compiled("focus", "light_heads")
_PLURAL = compiled("focus", "plural")
# Nouns that never are what a question is about (formal nouns among them: 継ぐつもり, 来るはず, やるわけ ask
# about the verb before them).
_NOT_HEAD = compiled("focus", "not_head")
# A part that is only marks and laughter (matched whole).
_ONLY_MARKS = compiled("focus", "only_marks")
# Suffixes of address, one token matched whole: さん, ちゃん, くん, 様; and the first three alone.
_HONORIFIC_SUFFIX = compiled("focus", "honorific_suffix")
_CALLING_SUFFIX = compiled("focus", "calling_suffix")
# なん before a copula (なんです) is no question word; か after a wh-word (何か) makes it some, not which.
_NAN = compiled("focus", "nan")
_COPULA_AFTER = compiled("focus", "copula_after")
_SOME_KA = compiled("focus", "some_ka")
_COPULA_LEMMAS = compiled("focus", "copula_lemmas")
# What after a noun sets it up as the topic (は, って, a comma), read on the two characters after it.
_TOPIC_AFTER = compiled("focus", "topic_after")
# Tokens matched whole: の, the honorific prefix's normalised form, owners that are a thing or the self.
_OF = compiled("focus", "of")
_HONORIFIC_PREFIX = compiled("focus", "honorific_prefix")
_THING_PRONOUNS = compiled("focus", "thing_pronouns")
_SELF_WORDS = compiled("focus", "self_words")
# A place made the line's topic by what follows it (この店って, お店は).
_PLACE_TOPIC_AFTER = compiled("focus", "place_topic_after")


@dataclass(frozen=True)
class Focus:
    text: str                               # the line read (what was taken back removed), normalised
    taken_back: str = ""                    # the part the player took back, normalised ("" when none)
    about: tuple[str, ...] = ()             # characters the line is about, named in it (not called)
    called: str | None = None               # a character called at the head (「ママ、…」)
    you: bool = False                       # it speaks of the one spoken to (あなた, or a question that names nobody)
    thing: bool = False                     # what it asks for belongs to a thing or place (店の名前)
    head: tuple[int, int] | None = None     # span in `text` of the noun the question is about
    phrase: tuple[int, int] | None = None   # the head with what modifies it (今かかってるの誰の曲, 飾ってある写真)
    sentence: tuple[int, int] | None = None # the sentence that asks (the last one, when none does)
    head_word: str | None = None
    wh: str | None = None
    wh_span: tuple[int, int] | None = None  # where the wh-word is (いつ of いつから)
    predicate: tuple[int, int] | None = None  # the verb the question ends on (習った of 「料理は誰に習ったの？」)
    question: bool = False
    request: bool = False                   # it asks the one spoken to to do something (歌ってください)
    vague: bool = False                     # only a pointer to something said (あれ, 例の件)
    third: bool = False                     # it asks about someone not here (その常連さん, 先代)
    view: bool = False                      # the one called is asked their own view (「ママはどう思う？」「葵から見て」)
    nouns: tuple[str, ...] = field(default=())   # content nouns (normalised forms), in order
    # the noun phrase the question sets up as its topic (「そのレコードって」), and its content nouns
    topic: tuple[int, int] | None = None
    topic_words: tuple[str, ...] = field(default=())

    def subjects(self, asked: str | None, also: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The characters the line is about; the one asked (`asked`, and `also` the one who spoke last) when
        it names nobody and speaks of them (you) or asks about no thing."""
        if self.about:
            # 「ママはどう思う？葵さんの計画」: about 葵's plan, and ママ's own view of it
            return self.about + ((self.called,) if self.view and self.called and self.called not in self.about else ())
        if self.third:
            return ()
        if asked is not None and (self.you or ((self.question or self.request) and not self.thing)):
            return (asked, *(a for a in also if a != asked))
        return ()

    def as_written(self, word: str) -> str:
        """A noun of the line, which `nouns` holds in its normalised form (御腹), as the player wrote it (お腹): what
        is said back to them."""
        if word in self.text:
            return word
        tokens = analyse(self.text).tokens
        for i, token in enumerate(tokens):
            if token.normalised and word.startswith(token.normalised) and _with_suffix(tokens, i) == word:
                return token.surface + word[len(token.normalised):]
        return word

    def at_head(self, start: int, end: int) -> bool:
        """Whether a word found at start..end is the noun the question is about."""
        return self.head is not None and start < self.head[1] and end > self.head[0]

    def at_predicate(self, start: int, end: int) -> bool:
        return self.predicate is not None and start < self.predicate[1] and end > self.predicate[0]

    def at_wh(self, start: int, end: int) -> bool:
        """Whether a word found at start..end holds the wh-word (いつから, 何歳, どこの)."""
        return self.wh_span is not None and start <= self.wh_span[0] and end >= self.wh_span[1]

    @property
    def light_head(self) -> bool:
        """A head that says little by itself (何してる人, どんな子): what modifies it is what is asked."""
        return self.head_word is not None and bool(_LIGHT_HEADS.fullmatch(_PLURAL.sub("", self.head_word)))

    @property
    def wh_modifies_head(self) -> bool:
        """The wh-word asks which of the head (なんていう歌手, 誰の曲, どんな映画): the head says what is asked."""
        return self.wh_span is not None and self.phrase is not None and self.head is not None and \
            self.phrase[0] <= self.wh_span[0] < self.head[0]

    def in_topic(self, start: int, end: int) -> bool:
        """Whether a word found at start..end lies in the noun phrase the question sets up as its topic."""
        return self.topic is not None and start < self.topic[1] and end > self.topic[0]

    def in_sentence(self, start: int, end: int) -> bool:
        return self.sentence is None or (start < self.sentence[1] and end > self.sentence[0])

    def in_phrase(self, start: int, end: int) -> bool:
        """Whether a word found at start..end is the head or modifies it (in its phrase); with no head, in
        the sentence that asks."""
        span = self.phrase or self.head or self.sentence
        return span is not None and start < span[1] and end > span[0]


def taken_back(text: str) -> tuple[str, str]:
    """(what the line means, what it takes back): 「店の名前じゃなくて、ママ自身の名前！」 →
    ("ママ自身の名前！", "店の名前"); a line that takes nothing back → (text, "")."""
    normalised = standard(nfkc(text))
    found = _TAKEN_BACK.search(normalised)
    if found is None or found.start() == 0:
        return normalised, ""
    before = normalised[:found.start()]
    # only the last clause before the marker is taken back (「いやいや、店の名前じゃなくて」)
    clause = re.split(r"[、,。!！？?\s]", before)
    negated = clause[-1] if clause else before
    rest = (before[:len(before) - len(negated)] + normalised[found.end():]).strip(" 、,")
    return rest, negated.strip()


def parts(text: str) -> list[str]:
    """The line cut where it turns to a second thing (sentences, あと / ところで); empty pieces dropped."""
    pieces = [p.strip(" 　、,") for p in _PART_BREAK.split(nfkc(text))]
    return [p for p in pieces if p and not _ONLY_MARKS.fullmatch(p)]


class FocusReader:
    """Reads lines of one scenario (its characters' names)."""

    def __init__(self, names: SceneNames) -> None:
        self.names = names
        self._people = {cid: tuple(nfkc(n) for n in ns if n) for cid, ns in names.characters.items()}
        self._places = tuple(nfkc(n) for place in names.places.values() for n in place.names)

    def read(self, text: str, present: tuple[str, ...] = ()) -> Focus:
        meant, back = taken_back(text)
        return _read(self, meant, back, present)

    def place_spans(self, text: str) -> list[tuple[int, int]]:
        return [(s, e) for s, e, _ in find_names(text, self._places)]

    def named(self, text: str) -> list[tuple[int, int, str]]:
        """Characters named in normalised `text`: (start, end, character id)."""
        owner = {n: cid for cid, ns in self._people.items() for n in ns}
        return [(s, e, owner[n]) for s, e, n in find_names(text, list(owner))]


def _read(reader: FocusReader, text: str, back: str, present: tuple[str, ...]) -> Focus:
    return _cached(reader, text, back, present)


@lru_cache(maxsize=2048)
def _cached(reader: FocusReader, text: str, back: str, present: tuple[str, ...]) -> Focus:
    tokens = analyse(text).tokens
    question = is_question(text) or bool(back)      # a correction asks again (「店の名前じゃなくて、ママの名前！」)
    about: list[str] = []
    about_at: list[int] = []
    called = None
    view = False
    for start, end, person in reader.named(text):
        after = text[end:]
        if _OTHER_OWNER.search(text[:start]):
            continue          # 「先代のママ」「隣の店のママ」: someone else called by the same word, not ママ
        if _CALL_BEFORE.match(text[:start]) and _CALL_AFTER.match(after) and called is None:
            called = person
            continue
        if _ASKED_AFTER.match(after) and called is None:
            called = person          # 「葵ちゃんから見て、ママってどんな人？」: 葵 is asked, ママ is the subject
            view = True
            continue
        if person not in about:
            about.append(person)
            about_at.append(start)
    if _BOTH.search(text):
        about.extend(p for p in present if p not in about)
    you = bool(_YOU.search(text))
    names = [(s, e) for s, e, _ in reader.named(text)] + reader.place_spans(text)
    sentence = _sentence(text)
    head_index = _head(tokens, text, names, sentence)
    head = (tokens[head_index].start, tokens[head_index].end) if head_index is not None else None
    # a compound ending on the head (お店の写真 → 写真; 喫茶店 → 店) counts whole
    if head_index is not None:
        first = head_index
        while first > 0 and _headable(tokens[first - 1], names) and tokens[first - 1].end == tokens[first].start:
            first -= 1
        last = head_index
        while last + 1 < len(tokens) and tokens[last + 1].start == tokens[last].end and (
                tokens[last + 1].pos[:1] == (TAG.suffix,) and not _HONORIFIC_SUFFIX.fullmatch(tokens[last + 1].surface)
                or _closes_compound(tokens[last + 1])):
            last += 1         # 営業 + マン, 誕生 + 日
        head = (tokens[first].start, tokens[last].end)
    phrase = None
    if head_index is not None and head is not None:
        phrase = (tokens[_phrase(tokens, first)].start, head[1])
    light = head is not None and bool(_LIGHT_HEADS.fullmatch(text[head[0]:head[1]]))
    thing = _owned_by_thing(tokens, head_index, text, reader) or (not light and (
        _place_topic(text, reader) or (not about and _thing_topic(tokens, text, names, head_index))))
    # (a counter after a number, 一|ヶ月, is no thing talked about)
    nouns = tuple(_with_suffix(tokens, i) for i, t in enumerate(tokens) if _headable(t, names) and
                  not (i > 0 and t.may_count and tokens[i - 1].is_numeral)
                  and not (i + 1 < len(tokens) and tokens[i + 1].pos[:1] == (TAG.suffix,) and
                           _HONORIFIC_SUFFIX.fullmatch(tokens[i + 1].surface)))
    predicate = None
    if sentence is not None:
        verbs = [t for t in tokens if sentence[0] <= t.start < sentence[1] and t.pos[:1] in ((TAG.verb,), (TAG.adjective,))
                 and not _LIGHT_VERBS.fullmatch(t.lemma) and not _LIGHT_VERBS.fullmatch(t.normalised)]
        if verbs and head is None:
            predicate = (verbs[-1].start, verbs[-1].end)
    whs = [m for m in _WH.finditer(text) if (sentence is None or sentence[0] <= m.start() < sentence[1])
           and not (_NAN.fullmatch(m.group(0)) and _COPULA_AFTER.match(text[m.end():]))
           and not _SOME_KA.match(text[m.end():])]      # 何か, どっちか: some, not which
    if not question:
        whs = []
    wh_found = whs[-1] if whs else None
    # (the pointer is what the sentence that asks is about: 「それ次第だと思います」 after a question points at nothing)
    vague = any(sentence is None or sentence[0] <= m.start() < sentence[1] for m in _VAGUE.finditer(text)) and \
        not [n for n in nouns if not _VAGUE_EMPTY.fullmatch(n)] and not about
    named_spans = [(start, end) for start, end, _ in reader.named(text)]
    third = not you and any(t.is_noun and (((_THIRD.fullmatch(t.surface) or _THIRD.fullmatch(t.normalised)) and
                                            _THIRD_AFTER.match(text[t.end:])) or
                                           # 「クロちゃんは何歳？」: someone called by name who is none of the characters
                                           (_CALLED_THIRD.match(text[t.end:]) and
                                            not any(s <= t.start < e for s, e in named_spans)))
                            for t in tokens)
    if third and question and sentence is not None and about_at:
        # 「ママ若っ！先代ってどんな人だったの？」: the sentence that asks is about someone not here; a character
        # named only in another sentence of the line is not what it asks about
        about = [p for p, at in zip(about, about_at, strict=False) if sentence[0] <= at < sentence[1]] + about[len(about_at):]
    topic = question_topic(text, tokens, names, sentence) if question else None
    # (the nouns as written and as normalised, without a suffix: 「師匠さんって」 is of 師匠)
    topic_words = tuple(dict.fromkeys(form for t in tokens
                                      if topic is not None and topic[0] <= t.start < topic[1] and _headable(t, names)
                                      for form in (t.surface, t.normalised) if form))
    return Focus(text=text, taken_back=back, about=tuple(about), called=called, you=you, thing=thing, third=third,
                 topic=topic if topic_words else None, topic_words=topic_words,
                 head=head, phrase=phrase, sentence=sentence, head_word=text[head[0]:head[1]] if head else None,
                 wh=wh_found.group(0) if wh_found else None, wh_span=wh_found.span() if wh_found else None,
                 predicate=predicate,
                 question=question, request=bool(_REQUEST.search(text)), vague=vague, nouns=nouns, view=view)


def question_topic(text: str, tokens: tuple[Token, ...] | None = None, names: list[tuple[int, int]] | None = None,
                   sentence: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """The span of the noun phrase the question sets up as its topic with a topic particle (lexicon
    topic_markers: 「そのレコードって、昔からあるの？」 → そのレコード; 「お客さんの前で緊張したことって」 → 緊張したこと), in
    the sentence that asks; None where it sets up none.  The phrase runs back from the particle to the start of
    the sentence, a comma, or a particle other than の; a name before the particle (「葵さんは、」) is whom the line
    speaks of, not a topic, nor is a time or a pronoun (今日は, ここって)."""
    tokens = analyse(text).tokens if tokens is None else tokens
    names = [] if names is None else names
    sentence = _sentence(text) if sentence is None else sentence
    if sentence is None:
        return None
    markers = frozenset(word_class("topic_markers").entries)
    inside = [i for i, t in enumerate(tokens) if sentence[0] <= t.start < sentence[1]]
    for i in inside:
        marker = tokens[i]
        if marker.surface not in markers or not marker.is_particle or i == inside[0]:
            continue
        last = i - 1
        while last > inside[0] and tokens[last].pos[:1] == (TAG.suffix,):
            last -= 1
        noun = tokens[last]
        if not noun.is_noun or any(s <= noun.start < e for s, e in names) or TAG.proper_noun in noun.pos:
            continue
        first = last
        while first > inside[0]:
            before = tokens[first - 1]
            if before.is_mark or (before.is_particle and not _OF.fullmatch(before.surface)):
                break
            first -= 1
        # (a clause that ends before the question does, 「えいがは いかねえよ スマホで なにを…」, was its own)
        rest = [t for t in tokens[i + 1:] if t.start < sentence[1] and not t.is_mark]
        ended = any(t.pos[:2] == (TAG.particle, TAG.final_particle) for t in rest[:-2])
        if not ended and any(_headable(t, names) for t in tokens[first:i]):
            return tokens[first].start, tokens[i - 1].end
    return None


def _with_suffix(tokens: tuple[Token, ...], i: int) -> str:
    """A noun with the suffixes glued after it (営業 + マン), or a one-kanji noun that closes a compound
    (誕生 + 日, 東京 + 駅)."""
    word = tokens[i].normalised or tokens[i].surface
    j = i + 1
    while j < len(tokens) and tokens[j].start == tokens[j - 1].end and (
            tokens[j].pos[:1] == (TAG.suffix,) or _closes_compound(tokens[j])):
        word += tokens[j].surface
        j += 1
    return word


def _closes_compound(token: Token) -> bool:
    """A one-kanji noun written right after a noun closes a compound with it (誕生 + 日, 東京 + 駅)."""
    return token.is_noun and len(token.surface) == 1 and is_kanji(token.surface)


def _headable(token: Token, names: list[tuple[int, int]]) -> bool:
    """A noun a question can be about: not a pronoun, a name, a time adverb (最近, 今日) or a formal noun."""
    form = token.normalised or token.surface
    return token.is_noun and token.pos[:1] != (TAG.pronoun,) and not _NOT_HEAD.fullmatch(form) and \
        not _NOT_HEAD.fullmatch(token.surface) and TAG.may_be_adverb not in token.pos and \
        not any(s <= token.start and token.end <= e for s, e in names)


def _sentence(text: str) -> tuple[int, int] | None:
    """The span of the last sentence that asks (of the whole line, when none does)."""
    ends = [m.end() for m in re.finditer(r"[。！!？?]", text)]
    bounds = [0] + ends
    spans = [(bounds[i], bounds[i + 1] if i + 1 < len(bounds) else len(text)) for i in range(len(bounds))]
    spans = [(a, b) for a, b in spans if text[a:b].strip(" 。！!？?")]
    return next((s for s in reversed(spans) if is_question(text[s[0]:s[1]])), spans[-1] if spans else None)


def _head(tokens: tuple[Token, ...], text: str, names: list[tuple[int, int]],
          sentence: tuple[int, int] | None) -> int | None:
    """The last content noun of the last question sentence; of the line before it when that sentence has
    none (「今流れてる歌、いい声ですね。誰ですか？」 → 歌)."""
    if not tokens or sentence is None:
        return None
    # the sentence before only when the one that asks has no content word of its own (「誰ですか？」)
    # (a verb the analyser marks as possibly auxiliary counts where it is no light verb: 「いつまで続けるおつもり？」)
    asks_alone = not any((t.is_content or t.is_verb and not _LIGHT_VERBS.fullmatch(t.lemma)) and
                         sentence[0] <= t.start < sentence[1] and not _headable(t, names) and
                         t.pos[:1] != (TAG.noun,) and not _COPULA_LEMMAS.fullmatch(t.lemma) for t in tokens)
    for a, b in ((sentence, (0, sentence[0])) if asks_alone else (sentence,)):
        best = topic = None
        for i, token in enumerate(tokens):
            if token.start < a or token.end > b or not _headable(token, names):
                continue
            if TAG.may_count in token.pos and i > 0 and tokens[i - 1].pos[1:2] == (TAG.numeral,):
                continue
            best = i
            after = text[token.end:token.end + 2]
            if _TOPIC_AFTER.match(after):
                topic = i
        if best is not None:
            if (a, b) == sentence and _predicate_after(tokens, best, b):
                return None   # 「先代さんがつけたんですか？」: the verb is what it asks; its nouns are arguments
            if (a, b) == sentence and topic is not None and topic < best and not _WH.search(text[a:b]):
                return topic  # 「先代ってママのお母さん？」: whether A is B asks about A
            # in the sentence before, the noun it set up as its topic (今流れてる歌、…) rather than its last
            return best if (a, b) == sentence or topic is None else topic
    return None


# Verbs that say little of their own after a noun: 「お茶ってある？」 still asks about the tea (one lemma or
# normalised form, matched whole).
_LIGHT_VERBS = compiled("focus", "light_verbs")


def _predicate_after(tokens: tuple[Token, ...], index: int, end: int) -> bool:
    """A verb or adjective of its own follows the noun in the sentence: the sentence ends on a predicate."""
    for token in tokens[index + 1:]:
        if token.start >= end:
            break
        if token.pos[:1] in ((TAG.verb,), (TAG.adjective,)) and not _LIGHT_VERBS.fullmatch(token.lemma) \
                and not _LIGHT_VERBS.fullmatch(token.normalised):
            return True
    return False


# Particles that end the phrase of a noun, looking back from it: what comes before them is another part of
# the clause (壁に | 飾ってある写真; 休みの日は | だいたい釣り).
_PHRASE_END = compiled("focus", "phrase_end")


def _phrase(tokens: tuple[Token, ...], first: int) -> int:
    """The first token of the phrase that ends on the head starting at `first`: the nouns, の and the
    modifying clause before it, up to a case or topic particle, a comma or an adverb."""
    i = first
    while i > 0:
        token = tokens[i - 1]
        if token.pos[:1] == (TAG.supplementary_symbol,) or token.pos[:1] == (TAG.adverb,) or token.pos[:1] == (TAG.conjunction,) \
                or token.pos[:1] == (TAG.interjection,):
            break
        if token.pos[:1] == (TAG.particle,) and _PHRASE_END.fullmatch(token.surface):
            break
        i -= 1
    return i


def _owned_by_thing(tokens: tuple[Token, ...], head: int | None, text: str, reader: FocusReader) -> bool:
    """The head noun is owned by a thing (店の名前, この曲の名前), not by a person."""
    if head is None:
        return False
    i = head - 1
    if i >= 0 and tokens[i].pos[:1] == (TAG.prefix,):
        i -= 1
    if i < 1 or not _OF.fullmatch(tokens[i].surface):
        return False
    owner = tokens[i - 1]
    if owner.pos[:1] == (TAG.pronoun,):
        return bool(_THING_PRONOUNS.fullmatch(owner.surface))
    if not owner.is_noun or TAG.may_be_adverb in owner.pos:
        return False
    if any(s <= owner.start < e for s, e, _ in reader.named(text)):
        return False
    return not _SELF_WORDS.fullmatch(owner.surface) and not _YOU.fullmatch(owner.surface)


def _thing_topic(tokens: tuple[Token, ...], text: str, names: list[tuple[int, int]], head: int | None) -> bool:
    """The line sets up a thing as its topic (「ナポリタン、いつからあるの？」「この曲って…」): a noun, not a
    person or a time (休みの日は, 今日は), followed by は, って or a comma."""
    for i, token in enumerate(tokens):
        if not _headable(token, names) or _TIMES.fullmatch(token.normalised) or _TIMES.fullmatch(token.surface) or \
                _PERSONS.fullmatch(token.surface) or _PERSONS.fullmatch(token.normalised) or i == head:
            continue
        if i + 1 < len(tokens) and (tokens[i + 1].is_noun or _CALLING_SUFFIX.fullmatch(tokens[i + 1].surface)):
            continue          # inside a compound (its last noun decides), or a person (お姉さん)
        if i > 0 and tokens[i - 1].pos[:1] == (TAG.prefix,) and _HONORIFIC_PREFIX.fullmatch(tokens[i - 1].normalised):
            continue          # お名前, ご出身: the honorific puts it on the one spoken to
        after = text[token.end:token.end + 2]
        if _TOPIC_AFTER.match(after):
            return True
    return False


def _place_topic(text: str, reader: FocusReader) -> bool:
    """A place (この店, お店, ここ) is the line's topic: 「この店って何年？」「お店は何時まで？」."""
    for name in (*reader._places, *listed("focus", "here")):
        i = text.find(name)
        while i >= 0:
            after = text[i + len(name):]
            if _PLACE_TOPIC_AFTER.match(after) or _predicate_at(text, i + len(name)):
                return True
            i = text.find(name, i + 1)
    return False


def _predicate_at(text: str, at: int) -> bool:
    """Whether a verb or an adjective starts at `at`: the place before it is its subject, the particle left out
    (「昼間って店開いてる？」)."""
    return any(t.start == at and t.is_predicate for t in analyse(text).tokens)
