"""Whose thing a word names: the place's or a person's.

Some listed words name a property that places and people both have: an
intent about the shop's name lists 名前, and its own texts say whose —
「店の名前、ちょっと怖くない？」, 店 being a name of a place.  Said of a
person, the same word is another topic: 葵の名前, ママの本名, 君の名前, and
お名前 (the honorific prefix puts the name on the listener).  Words the
intent's texts do not tie to a place (料理: ママの料理 is still the menu) are
left alone.
"""
from __future__ import annotations

import re
from typing import Any

from ..scenario.inputs import PlayerInput
from .cues import SceneNames
from .ja import analyse
from .ja.tokens import TAG
from .lexicon import compiled, pattern, word_class
from .text import nfkc

# (each shape and word list below is a pattern of the lexicon table owners.json, with its examples)
# Tails between a character's name and the word: 葵の名前, ママって名前, 葵は名前… (a lookahead at each place one
# starts and runs to the end of the text before the word)
_NAME_TAIL = compiled("owners", "name_tail")
# Between a place's name, in quotes or not, and the word: 店の名前, 「血の池」って名前
_PLACE_TAIL = compiled("owners", "place_tail")
# Between a pronoun and the word (君の名前, あなたって名前), matched whole against a token's surface.
_PARTICLES = compiled("owners", "personal_particles")
# Readings of pronouns that point at a thing or place, not a person (これ, ここ, こちら …), matched whole.
_DEMONSTRATIVE_READINGS = compiled("owners", "demonstrative_readings")
# The honorific prefix お/ご as the analyser normalises it, matched whole.
_HONORIFIC_PREFIX = compiled("owners", "honorific_prefix")
# の as a whole token between an owner and the word; の ending the text before the word.
_OF = compiled("owners", "of_token")
_OF_AT_END = compiled("owners", "of_at_end")


def _tail_starts(before: str, tail: re.Pattern[str]) -> list[int]:
    """Every place in `before` where a tail of `tail` starts and runs to its end (葵ちゃんの: its の and its ちゃんの)."""
    return [m.start() for m in tail.finditer(before)]


def place_owned_words(scenario: Any) -> dict[str, frozenset[str]]:
    """Per intent ("意図:X"), its listed words that its own texts tie to a
    place (店の名前)."""
    names = SceneNames.of(scenario)
    places = {nfkc(n) for place in names.places.values() for n in place.names}
    # (any of the places' names, the particle of place_of, then the word: built for a word only where a text has it)
    tie = f"(?:{'|'.join(re.escape(p) for p in sorted(places))})(?:{pattern('owners', 'place_of')})"
    out: dict[str, frozenset[str]] = {}
    for intent in scenario.intents.values():
        texts = [nfkc(t) for t in (*intent.examples, intent.description)]
        owned = {w for w in intent.words
                 if places and any(nfkc(w) in t and re.search(tie + re.escape(nfkc(w)), t) for t in texts)}
        if owned:
            out[str(PlayerInput.intent(intent.id))] = frozenset(owned)
    return out


def said_of_person(text: str, start: int, names: SceneNames | None) -> bool:
    """Whether the word at `start` of normalised `text` is said of a person:
    a character's name before it (葵の名前, ママの本当の名前), a personal
    pronoun (君の名前, あなたの), or the honorific prefix (お名前)."""
    before = text[max(0, start - 12):start]
    if names is not None:
        tails = _tail_starts(before, _NAME_TAIL)
        for character in names.characters.values():
            for name in character:
                n = nfkc(name)
                if any(before.endswith(n, 0, k) for k in tails):
                    return True
    tokens = analyse(text).tokens
    previous = [t for t in tokens if t.end <= start]
    if not previous or previous[-1].end != start:
        return False
    last = previous[-1]
    if last.pos[:1] == (TAG.prefix,) and _HONORIFIC_PREFIX.fullmatch(last.normalised):
        return True
    if _PARTICLES.fullmatch(last.surface) and len(previous) >= 2:
        owner = previous[-2]
        return owner.pos[:1] == (TAG.pronoun,) and not _DEMONSTRATIVE_READINGS.fullmatch(owner.reading)
    return False


def said_of_thing(text: str, start: int, names: SceneNames | None) -> bool:
    """Whether the word at `start` of normalised `text` is a third person's (「その常連さんの名前」「隣のおばあさんの
    名前」): a noun with a person's suffix (honorifics: さん, ちゃん…) and の right before it, who is no character of
    the scene.  A thing's own word (ひまわりの花言葉, ガラスの温室) stays the scene's."""
    tokens = analyse(text).tokens
    previous = [t for t in tokens if t.end <= start]
    if len(previous) < 3 or previous[-1].end != start or not _OF.fullmatch(previous[-1].surface):
        return False
    suffix, owner = previous[-2], previous[-3]
    if word_class("honorifics").at_start(suffix.surface) is None or not owner.is_noun or \
            owner.pos[:1] == (TAG.pronoun,):
        return False
    if names is not None:
        known = [nfkc(n) for ns in names.characters.values() for n in ns]
        if any(n and (owner.surface in n or n.startswith(owner.surface)) for n in known):
            return False
    return True


def owner_named(text: str, start: int, names: SceneNames | None) -> str | None:
    """The character whose name, with an honorific or none, and の stand right before the word at `start` of
    normalised `text` (葵さんの夢, ママの十八番): the one the thing belongs to; a place's id where a place's name, in
    quotes or not, and の or って do (「血の池」って名前: the shop's name, no one's); None where no name does."""
    if names is None:
        return None
    before = text[:start]
    tails = _tail_starts(before, _PLACE_TAIL)
    for place in names.places.values():
        for name in place.names:
            n = nfkc(name)
            if n and any(before.endswith(n, 0, k) for k in tails):
                return place.id
    of = _OF_AT_END.search(before)
    if of is None:
        return None
    before = before[:of.start()]
    honorific = word_class("honorifics").entries
    for character, spelled in names.characters.items():
        for name in spelled:
            n = nfkc(name)
            if before.endswith(n) or any(before.endswith(n + h) for h in honorific):
                return character
    return None
