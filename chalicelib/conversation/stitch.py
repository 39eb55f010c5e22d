"""Answers to a line of several parts, stitched into what the characters say.

A line that does two things (「ビールください。あと景気はどう？」) is answered part by part (turn.py's reading:
a first part apart, then the question).  Each part with an answer of its own is said, in order, by the one
who answers it.  A stock brush-off (a fallback, the 「さあ、私にはわからないわね」 reaction to a question) says
nothing of the line: after a real answer to another part it only makes the turn sound absent-minded
(「はい、ビール。よく冷えてるわよ。さあ、私にはわからないわね。」), so it is said only when no part has anything
better.

Whom each part is said to, strongest first: a name called or asked in that part (「ママ、きれいですね。葵さん、
…」), the character tapped, the one who asked the open question, then whoever the rest of the line was said
to when no name chose them, else the place's default.  A name in another part does not reach across:
「ありがとう。葵さんは映画好きなの？」 tapped to ママ thanks ママ and asks 葵.
"""
from __future__ import annotations

from ..answers import Answer
from ..dialogue_acts import ACT
from ..interpret.addressee import detect_addressee
from ..scenario import GameRules, GameState
from ..turn_record import AnswerSource

# the dialogue act whose reaction is the stock "I don't know" (see butai_tools' dialogue sets: a brush-off is
# a fallback or a reaction to 質問)
_ASKING_ACT = ACT.question


def brush_off(answer: Answer | None) -> bool:
    """A stock line that answers nothing of what was said: a fallback, or the reaction to a question as such."""
    if answer is None:
        return False
    if answer.source == AnswerSource.FALLBACK:
        return True
    if answer.source != AnswerSource.REACTION or answer.ref is None:
        return False
    kind = answer.ref.split("#", 1)[0].split("/")      # reaction/<speaker>/<act>
    return len(kind) == 3 and kind[2] == _ASKING_ACT


def _menu_kind(answer: Answer | None) -> str | None:
    """treat, declined, bill… of a menu answer (menu/<server>/<kind>#n; a treat with its item is an order), else
    None."""
    if answer is None or answer.source not in (AnswerSource.MENU, AnswerSource.ORDER) or answer.ref is None:
        return None
    return answer.ref.split("#", 1)[0].rsplit("/", 1)[-1]


def kept(first: Answer | None, answer: Answer | None) -> tuple[Answer | None, Answer | None]:
    """The answers to a line's first part and to the rest that are said: a brush-off is dropped when the
    other part has an answer that is not one, and a treat turned down when the other part treats
    (「おごるって言ったでしょ。ママさんも飲んで」 treats: no 「冗談よ、気にしないで」 after the thanks)."""
    if first is not None and answer is not None:
        if _menu_kind(answer) == "declined" and _menu_kind(first) == "treat":
            return first, None
        if _menu_kind(first) == "declined" and _menu_kind(answer) == "treat":
            return None, answer
        if brush_off(answer) and not brush_off(first):
            return first, None
        if brush_off(first) and not brush_off(answer):
            return None, answer
    return first, answer


def named_in(text: str, rules: GameRules, state: GameState, about: tuple[str, ...] = ()) -> str | None:
    """The character a part is said to by name: called or asked in it (「ママ、」「葵さんは…？」), else the one
    person here a question is about (「ママの趣味は？」 in front of ママ asks ママ)."""
    found = detect_addressee(text, rules, state)
    if found.character is not None:
        return found.character
    here = [p for p in about if p in rules.people(state.place)]
    return here[0] if len(here) == 1 else None


def part_addressee(text: str, rules: GameRules, state: GameState, *, to: str | None, asker: str | None,
                   rest: str | None, rest_named: bool, about: tuple[str, ...] = ()) -> str | None:
    """Whom a line's first part (`text`) is said to (see the module's doc).  `rest`: the addressee of the rest
    of the line, `rest_named`: whether a name in the rest chose them; `about`: whom the part asks about, when
    it asks."""
    present = rules.people(state.place)
    named = named_in(text, rules, state, about)
    if named is not None:
        return named
    for candidate in (to, asker, None if rest_named else rest):
        if candidate is not None and candidate in present:
            return candidate
    return rules.responder(state.place)
