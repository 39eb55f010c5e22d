"""Who the player is talking to, and the addressee narrowing of the spec.

Detection, strongest first:

1. a name or alias at the head of the sentence, as a call (「葵、」「ママ！」
   「ねえ葵ちゃん、」) or a question put to that person (「葵はどう思う？」);
2. a phrasing anywhere that names the person asked (「ママに聞きたいんだけど」
   「葵の意見は？」);
3. the addressee chosen on the stage (passed in).

The text wins over the stage's choice because it is what the player said
last.  Someone who is not at the current place is never the addressee.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .. import lazyre
from ..scenario import GameRules, GameState
from .lexicon import compiled, pattern, word_class
from .options import InterpretChoices, Option
from .text import nfkc

# (a line may open on a pause: 「…葵さん、」「...ママ」)

_GLUED_CONTENT = lazyre.compile(r"^[\u4e00-\u9fff\u30a1-\u30fa]")
# (「ママ？」「ママ？ちょっといい？」 call too; so do 「ママってば」 and 「葵ちゃんね、」「ママよ、」)
_CALL_AFTER = compiled("interpretation", "call_after")
# (a call that ends its own sentence, 「おい、葵。お前はどうしたいんだ」, calls when a call word leads it)
_CALL_ENDS = lazyre.compile(r"^[。.]")
_QUESTION_AFTER = compiled("interpretation", "question_after")
_PHRASE_AFTER = compiled("interpretation", "phrase_after")
# a phrase naming whom the player asks calls them only while the player asks now: not a past deed (「ママに聞いた
# んだけど」), nor one put to someone else to try (「ママに言ってみたら？」「ママに相談すれば？」)
# (「葵ちゃんに聞いてんだよ」「葵さんに聞いてるんだ」 ask now: 〜てんだ and 〜てるんだ are 〜ているんだ)
_NOT_ASKING_NOW = compiled("interpretation", "not_asking_now")
# The one character after a name that puts the phrase to that person (に, へ), or none.
_TO_WHOM = compiled("interpretation", "to_whom")
# Anything but a space or a mark: a call word before the name.
_CALL_LEAD_WORD = compiled("interpretation", "call_lead_word")
# Where a sentence starts: after a sentence end (a name there calls as one at the head of the line does).
_SENTENCE_START = lazyre.compile(r"(?<=[。！？!?])[\s　]*(?=\S)")


@cache
def _lead() -> re.Pattern[str]:
    """What may stand before a name at a sentence's head that calls (lexicon call_leads), after a pause."""
    return re.compile(rf"{pattern('interpretation', 'call_lead_mark')}*(?:{word_class('call_leads').alternation})?[、,\s]*")


def calls_at_head(text: str, name: str) -> bool:
    """Whether `text` (normalised) starts by calling `name` (the lexicon's test reads call_leads by this)."""
    lead = _lead().match(text)
    rest = text[lead.end():] if lead else text
    return rest.startswith(name) and bool(_CALL_AFTER.match(rest[len(name):]))


def _asks_by_phrase(after: str) -> bool:
    """Whether what follows a name says the player asks that person (「ママに聞きたいんだけど」「葵の意見は？」)."""
    return bool(_PHRASE_AFTER.match(after)) and not (_TO_WHOM.fullmatch(after[:1]) and _NOT_ASKING_NOW.match(after))


@dataclass(frozen=True)
class AddresseeFound:
    character: str | None     # character id, or None
    how: str | None           # "head", "question", "phrase", "given", or None
    ignored: str | None = None  # a character named but not present (ignored)

    def to_dict(self) -> dict:
        return {"character": self.character, "how": self.how, "ignored": self.ignored}


def _names(rules: GameRules) -> list[tuple[str, str]]:
    sc = rules.scenario
    pairs = []
    for cid, character in sc.characters.items():
        for name in dict.fromkeys([character.name, *character.aliases, cid]):
            if name:
                pairs.append((nfkc(name), cid))
    pairs.sort(key=lambda p: len(p[0]), reverse=True)
    return pairs


def _called_at(head: str, names: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(character, how) where a sentence starts by calling someone or putting a question to them."""
    lead = _lead().match(head)
    led = lead is not None and bool(_CALL_LEAD_WORD.search(head[:lead.end()]))
    head = head[lead.end():] if lead else head
    honorifics = word_class("honorifics")
    for name, cid in names:
        if head.startswith(name):
            rest = head[len(name):]
            # (an honorific the name is written without, drawn out as one calls: 「葵さーん、」)
            if (honorific := honorifics.at_start(rest)) is not None and _CALL_AFTER.match(rest[len(honorific):]):
                rest = rest[len(honorific):]
            how = "head" if _CALL_AFTER.match(rest) or not rest.strip() or (led and _CALL_ENDS.match(rest)) else (
                "question" if _QUESTION_AFTER.match(rest) else None)
            if how is None and name.endswith(tuple(honorifics.entries)) and _GLUED_CONTENT.match(rest):
                how = "head"        # 「葵さんインスタやってる？」: the call with its comma dropped
            if how is None and _asks_by_phrase(rest):
                how = "phrase"
            return (cid, how) if how is not None else None
    return None


def detect_addressee(text: str, rules: GameRules, state: GameState, given: str | None = None) -> AddresseeFound:
    present = set(rules.people(state.place))
    normalised = nfkc(text).strip()
    names = _names(rules)
    ignored: str | None = None

    # the head of the line first, then the head of a later sentence, the last that calls (「…ママらしい。葵ちゃん
    # は？スマホ派？」「…村井さんに。…葵ちゃんも何か飲む？」「…気になるわな。葵ちゃん、ドアは何色にすんの」)
    heads = [m.start() for m in _SENTENCE_START.finditer(normalised)]
    for at in [0, *reversed([h for h in heads if h > 0])]:
        found = _called_at(normalised[at:], names)
        if found is None:
            continue
        if found[0] in present:
            return AddresseeFound(found[0], found[1])
        ignored = ignored or found[0]
    for name, cid in names:
        start = normalised.find(name)
        while start >= 0:
            if _asks_by_phrase(normalised[start + len(name):]):
                if cid in present:
                    return AddresseeFound(cid, "phrase")
                ignored = ignored or cid
            start = normalised.find(name, start + 1)
    if given is not None and given in present:
        return AddresseeFound(given, "given", ignored)
    if given is not None and given not in present:
        ignored = ignored or given
    return AddresseeFound(None, None, ignored)


def addressee_narrowing(choices: InterpretChoices, rules: GameRules, state: GameState,
                        addressee: str | None) -> tuple[InterpretChoices, list[str]]:
    """Drop intents the addressed character would not answer (spec: an intent
    whose first response line that could fire is spoken by someone else stays
    only where the addressee has knowledge for it).  Returns the narrowed
    choices and the tokens removed."""
    if addressee is None:
        return choices, []
    removed: list[str] = []

    def allowed(option: Option) -> bool:
        if not option.input.is_intent:
            return True
        if rules.addressee_allows(option.input, state, addressee):
            return True
        removed.append(option.token)
        return False

    return choices.keep(allowed), removed
