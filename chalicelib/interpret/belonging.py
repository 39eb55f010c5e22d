"""Whose life a line tells of: the player's own, or someone else's.

Japanese marks the speaker's own family and life by form, not by a separate word: a bare kin noun (息子, 母,
主人) is the speaker's own kin, the honorific one (息子さん, お母さん) someone else's; a first person (私, 僕, うち)
as the subject or the owner (私は, 私シフト制, うちの息子) puts what follows on the speaker.  A statement told
of the player's own life is not about the characters' world: a character's knowledge that shares one of its words
(「うちの息子なんて口きいてくれない」 and ママ's own family; 「私シフト制だから」 and 葵's shifts) does not answer it —
the character takes it up as the player's story.

Read on the analyser's tokens (chalicelib/interpret/ja); the words are lexicon classes (`first_person`,
`humble_kin`), the honorifics after a name the `honorifics` class.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .. import lazyre
from .asking import is_question
from .ja import analyse
from .ja.tokens import TAG, Token
from .lexicon import compiled, word_class
from .text import nfkc

_SENTENCE = lazyre.compile(r"[^。！!？?\n]+[。！!？?\n]*")
# (the words below are patterns of the lexicon table owners.json, with their examples, matched whole against a
# token's surface)
# の between an owner and what it owns (うちの息子, うちの猫の名前)
_OF = compiled("owners", "of_token")
# What makes a word what the sentence is about: 息子は, 母が, 弟も, 女房って, 息子なんて, 娘ったら
_SUBJECT_PARTICLES = compiled("owners", "subject_particles")
# うち, as often the shop in a character's words
_HOUSE = compiled("owners", "house_first_person")
# What may follow a first person the sentence is about: 私は, 僕も, 私って, 俺が, 私、
_AFTER_FIRST_PERSON = compiled("owners", "after_first_person")


@dataclass(frozen=True)
class Own:
    """Where a line tells of the player's own life: spans of its normalised text."""
    spans: tuple[tuple[int, int], ...] = ()   # the player's own: their kin, what they own, what they tell of themselves
    told: bool = False          # a statement with the player as its subject (私は…, 僕も…, 私シフト制…)
    kin: bool = False           # a statement about the player's kin (「息子が反抗期で」「母が入院してて」)

    def covers(self, start: int, end: int) -> bool:
        return any(start < e and end > s for s, e in self.spans)


def _is(token: Token, name: str) -> bool:
    entries = word_class(name).entries
    return token.surface in entries or token.lemma in entries


def _honorific_after(tokens: tuple[Token, ...], i: int) -> bool:
    return i + 1 < len(tokens) and tokens[i + 1].surface in word_class("honorifics").entries


def _prefixed(tokens: tuple[Token, ...], i: int) -> bool:
    return i > 0 and tokens[i - 1].pos[:1] == (TAG.prefix,) and tokens[i - 1].end == tokens[i].start


def _owner_before(tokens: tuple[Token, ...], i: int) -> Token | None:
    """The noun owning token i (X of 「Xの息子」), if one."""
    if i >= 2 and _OF.fullmatch(tokens[i - 1].surface) and tokens[i - 1].pos[:1] == (TAG.particle,):
        return tokens[i - 2]
    return None


def _own_noun(tokens: tuple[Token, ...], i: int, asking: bool) -> bool:
    """Whether token i is a noun the player owns: after 私の/うちの, or (in a statement) a bare kin word."""
    token = tokens[i]
    if not token.is_noun:
        return False
    owner = _owner_before(tokens, i)
    if owner is not None:
        return _is(owner, "first_person")
    if asking or not _is(token, "humble_kin") or _honorific_after(tokens, i) or _prefixed(tokens, i):
        return False
    return True


def _subject(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether token i is what the sentence is about: followed by は, が, も or って."""
    return i + 1 < len(tokens) and bool(_SUBJECT_PARTICLES.fullmatch(tokens[i + 1].surface)) and \
        tokens[i + 1].pos[:1] == (TAG.particle,)


def _with(tokens: tuple[Token, ...], i: int) -> bool:
    """Whether token i is the one something is done with (弟と, 母と): the player's doing, with their kin."""
    return i + 1 < len(tokens) and tokens[i + 1].is_case_particle and compiled("plans", "done_with").fullmatch(
        tokens[i + 1].surface) is not None


def _first_person_subject(tokens: tuple[Token, ...], i: int) -> bool:
    """A first person as the one the sentence is about: 私は, 僕も, 私、, 私シフト制 — not 私に (to me)."""
    token = tokens[i]
    if not _is(token, "first_person") or token.pos[:1] not in ((TAG.pronoun,), (TAG.noun,)):
        return False
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if after is None:
        return False
    if _HOUSE.fullmatch(token.surface):
        return False          # うちは is as often 'this shop' in a character's words: only うちの counts
    return bool(_AFTER_FIRST_PERSON.fullmatch(after.surface)) or after.is_noun


def kin_of_player(text: str) -> tuple[tuple[int, int], ...]:
    """Bare kin words and first-person-owned nouns anywhere in normalised `text`, questions too: where the line
    asks the listener's view of a matter (「息子のことなんだけど、どうしたらいいと思います？」), a bare kin word is
    the player's own."""
    text = nfkc(text)
    tokens = analyse(text).tokens
    return tuple((t.start, t.end) for i, t in enumerate(tokens) if _own_noun(tokens, i, asking=False))


def _own_plan(sentence: str) -> bool:
    """The sentence muses on what the player means to do (「弟にLINEだけでも送ってみようかな」): theirs."""
    return bool(compiled("plans", "own_plan").search(sentence.strip().rstrip(" 　。!！…")))


def read_own(text: str) -> Own:
    """Where normalised `text` tells of the player's own life."""
    return _read(nfkc(text))


@lru_cache(maxsize=1024)
def _read(text: str) -> Own:
    spans: list[tuple[int, int]] = []
    told = kin = False
    for m in _SENTENCE.finditer(text):
        sentence, base = m.group(0), m.start()
        asking = is_question(sentence)
        tokens = analyse(sentence).tokens
        if not asking and (any(_first_person_subject(tokens, i) for i in range(len(tokens))) or
                           _own_plan(sentence)):
            # (the player is the subject: the whole sentence is theirs — 「僕も休みは喫茶店めぐりが趣味なんです」)
            spans.append((base, base + len(sentence)))
            told = True
            continue
        # (else only the owned words: 「女房がジャズもいいって言ってた」 is the player's wife's view of jazz)
        owned = [i for i in range(len(tokens)) if _own_noun(tokens, i, asking)]
        spans.extend((base + tokens[i].start, base + tokens[i].end) for i in owned)
        # (and what belongs to it: the 名前 of 「うちの猫の名前」 is the cat's, not the shop's)
        spans.extend((base + tokens[i + 2].start, base + tokens[i + 2].end) for i in owned
                     if i + 2 < len(tokens) and _OF.fullmatch(tokens[i + 1].surface) and tokens[i + 2].is_noun)
        # (the player's kin as the subject, or as the one the player did something with: 「弟と喧嘩したままなんです」)
        kin = kin or (not asking and any(_subject(tokens, i) or _with(tokens, i) for i in owned))
    return Own(tuple(spans), told, kin)
