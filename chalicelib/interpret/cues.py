"""Phrasings that show what the player means to *do*: move, leave, agree.

These are deliberately narrow rules about Japanese phrasing, not a parser:
they recognise a destination followed by a movement verb in a form that
commits to going (行こう, 戻るね, 入りたい, 行ってみない？), and keep apart the
forms that only talk about going (行ったことある？, 行ってもいい？, 行かない).
They are shared by refinement (which overrides or vetoes a classifier's
move) and by the lexical backend (which has no other way to see moves).

All functions take normalised text (`text.nfkc`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .. import lazyre
from .asking import WH
from .lexicon import compiled, group, word_class
from .lexicon import pattern as source_of
from .text import find_names, nfkc

CLAUSE_BREAK = "。！？!?\n"
_TRAILING = compiled("moves", "trailing_marks")

# A movement verb: the stem, with a look-ahead on the kana that inflects it.
MOVE_VERB_RE = compiled("moves", "move_verb")
LOOK_VERB_RE = compiled("moves", "look_verb")
TALK_WORD_RE = compiled("moves", "talk_word")

# Forms that only talk about going, checked first (on the text after the stem).
_NEGATIVE_FORMS = group("moves", "talks_of_going_")
_POSITIVE_FORMS = group("moves", "commits_")
# Purpose before 行く (映画見に行こう): the trip is not to a place of the scene.
# Taking it back later in the text: 「…と思ったけど、やっぱやめとく」「行こうかな、いや、まだいる」.
_CANCEL = compiled("moves", "cancel")


# Staying put, said after a hedge: 「…いや、もうちょっとここにいよ」「…でも、まだ残る」.
_STAY = compiled("moves", "stay")
# A hedge (〜かな, 〜かも, …) followed by a turn (いや, でも, やっぱ): what came before is taken back unless
# the turn commits to going after all (「行こうかな、いや、やっぱ行こう」).
_RETRACTION = compiled("moves", "retraction")


def cancelled(text: str, start: int = 0) -> bool:
    """Whether the text takes back, at or after `start`, what it said before
    (a hedge or a cancellation of a move or a leave)."""
    text = unstretched(text)
    if _CANCEL.search(text, start) or _STAY.search(text, start):
        return True
    turn = _RETRACTION.search(text, start)
    if turn is None:
        return False
    rest = text[turn.end():]
    return not any(_committing(rest[m.end():]) for m in MOVE_VERB_RE.finditer(rest)) and not _FAREWELL_ANY.search(rest)


_STRETCH = compiled("moves", "stretch")


def unstretched(text: str) -> str:
    """The text without lengthening marks after hiragana (行ってきまーす → 行ってきます, またねー → またね);
    a katakana word's ー stays (ビール)."""
    return _STRETCH.sub("", text)


_PURPOSE_BEFORE = compiled("moves", "purpose_before")
_BARE_DESTINATION = compiled("moves", "bare_destination")
_GENERIC_MOVE = compiled("moves", "generic_move")


def _committing(after: str) -> bool:
    """Whether the text after a verb stem commits to the act."""
    for pattern in _NEGATIVE_FORMS:
        if pattern.search(after):
            return False
    return any(p.search(after) for p in _POSITIVE_FORMS)


def _clause_end(text: str, start: int) -> int:
    for i in range(start, len(text)):
        if text[i] in CLAUSE_BREAK:
            return i + 1
    return len(text)


# 「控え室、ちょっと覗いてきます」: a little adverb between the place and a looking verb.
_LOOK_GAP = compiled("moves", "look_gap")


_SHOW_ME = compiled("moves", "show_me")
# the verb's own te-form (行って, 入って, 見て) then leave: not 行かなくてもいい (no need to go)
_PERMISSION = compiled("moves", "permission")


def committing_verb_after(text: str, start: int, *, window: int = 12, look: bool = False,
                          talk: bool = False, permission: bool = False) -> bool:
    """A movement verb in a committing form within `window` characters after
    `start`, in the same clause.  `permission`: asking leave to go there (行ってもいい？) counts too — the
    place is named, so the request is the move."""
    end = min(_clause_end(text, start), start + window + 8)
    segment = text[start:end]
    for match in MOVE_VERB_RE.finditer(segment):
        if match.start() > window:
            break
        if compiled("moves", "object_particle").search(segment[:match.start()]):
            continue
        if _committing(segment[match.end():]):
            return True
        if permission and _PERMISSION.match(segment[match.end():]):
            return True
    if look:
        for match in LOOK_VERB_RE.finditer(segment):
            near = match.start() <= 3 or bool(_LOOK_GAP.fullmatch(segment[:match.start()]))
            if near and compiled("moves", "look_commits").match(segment[match.end():]):
                return True
        # 「奥、見せてもらってもいいですか？」: asking to be shown the place named is asking to go there
        for match in _SHOW_ME.finditer(segment):
            if match.start() <= 3 or bool(_LOOK_GAP.fullmatch(segment[:match.start()])):
                return True
    if talk:
        for match in TALK_WORD_RE.finditer(segment):
            if match.start() <= 4 and compiled("moves", "talk_commits").search(segment[match.end():]):
                return True
    return False


@dataclass(frozen=True)
class Place:
    id: str
    names: tuple[str, ...]       # id and aliases


@dataclass
class SceneNames:
    """The names the cues look for, from one scenario."""
    places: dict[str, Place] = field(default_factory=dict)
    characters: dict[str, tuple[str, ...]] = field(default_factory=dict)   # id → name, aliases, id
    located: dict[str, tuple[str, ...]] = field(default_factory=dict)      # character → places
    leave_phrases: tuple[str, ...] = ()                                    # the world's own (店を出る)
    place_leave_phrases: dict[str, tuple[str, ...]] = field(default_factory=dict)   # a place's own (湯から上がる)
    enter_phrases: dict[str, tuple[str, ...]] = field(default_factory=dict)         # going to a place (湯に入る)
    items: tuple[str, ...] = ()                                            # what the menus serve, by every word

    @classmethod
    def of(cls, scenario) -> SceneNames:
        places = {pid: Place(pid, tuple(dict.fromkeys([pid, *p.aliases]))) for pid, p in scenario.places.items()}
        characters = {cid: tuple(dict.fromkeys([c.name, *c.aliases, cid])) for cid, c in scenario.characters.items()}
        located: dict[str, list[str]] = {}
        for pid, p in scenario.places.items():
            for person in p.people:
                located.setdefault(person, []).append(pid)
        phrases = tuple(getattr(getattr(scenario, "scenario", None), "leave_phrases", ()) or ())
        leave = {pid: tuple(p.leave_phrases) for pid, p in scenario.places.items() if getattr(p, "leave_phrases", ())}
        enter = {pid: tuple(p.enter_phrases) for pid, p in scenario.places.items() if getattr(p, "enter_phrases", ())}
        items = tuple(dict.fromkeys(w for menu in getattr(scenario, "menus", {}).values() for item in menu.items
                                    for w in (item.id, *item.words)))
        return cls(places, characters, {c: tuple(v) for c, v in located.items()}, phrases, leave, enter, items)

    def says_leaving(self, text: str, place: str | None = None) -> bool:
        """The sentence ends with one of the scenario's leaving phrases, or of `place`'s own (phrases.py)."""
        return said(self.leave_phrases, text) or (place is not None and said(self.place_leave_phrases.get(place, ()),
                                                                             text))

    def says_entering(self, text: str, exits: Iterable[str]) -> list[str]:
        """The exits whose own going-there phrases the sentence ends with (湯に入ろう)."""
        return [pid for pid in exits if said(self.enter_phrases.get(pid, ()), text)]


_PHRASES: dict[tuple[str, ...], object] = {}


def said(phrases: tuple[str, ...], text: str) -> bool:
    """Whether the sentence ends with one of `phrases`, committed to (phrases.py); matchers are built once."""
    if not phrases:
        return False
    from .phrases import SaidPhrases
    matcher = _PHRASES.get(phrases)
    if matcher is None:
        matcher = _PHRASES[phrases] = SaidPhrases(phrases)
    return matcher.said(text)   # type: ignore[attr-defined]


_NOT_A_PLACE_AFTER = compiled("moves", "not_a_place_after")


def place_mentions(text: str, names: SceneNames, place_ids: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, place id) for each mention of the given places."""
    wanted: dict[str, str] = {}
    for pid in place_ids:
        place = names.places.get(pid)
        if place is None:
            continue
        for name in place.names:
            wanted.setdefault(nfkc(name), pid)
    out = []
    for start, end, name in find_names(text, wanted):
        if _NOT_A_PLACE_AFTER.match(text[end:]):
            continue
        out.append((start, end, wanted[name]))
    return out


# A person's name, an honorific (源さん, 葵ちゃん: the lexicon's honorifics), then where they are.
_PERSON_DESTINATION = lazyre.compile(
    rf"^(?:{word_class('honorifics').alternation})?"
    + source_of("moves", "person_destination"))


# 「奥で話そう」「奥の部屋で話そうか」: talking there is going there.
_TALK_PLACE = compiled("moves", "talk_place")

_QUOTED = lazyre.compile(r"「[^」]*」|『[^』]*』|“[^”]*”|\"[^\"]*\"")
# 〜って言ってた / 〜と聞いた: someone else's words, reported.
_REPORTED = compiled("moves", "reported")
# Lines that look like the classifier prompt's own structure (a heading, an option line).
_PROMPT_LINE = compiled("interpretation", "prompt_line")


_SENTENCE_END = lazyre.compile(r"[。！？!?]")


def player_words(text: str) -> str:
    """The text without what imitates the prompt (a heading, an option line up
    to its first sentence end): what a player pasted there is not their own cue,
    but a sentence they wrote after it still is."""
    kept = []
    for line in text.splitlines():
        if _PROMPT_LINE.match(line):
            end = _SENTENCE_END.search(line)
            line = line[end.end():] if end else ""
        kept.append(line)
    return "\n".join(kept)


def without_quoted_phrases(text: str, names: SceneNames) -> str:
    """The text with quoted phrases blanked (「お邪魔しました」って言うの？ quotes words, it does not say
    them); a quoted name alone (「控え室」に行こう) stays."""
    known = {nfkc(n) for place in names.places.values() for n in place.names}
    known.update(nfkc(n) for person in names.characters.values() for n in person)

    def blank(m: re.Match) -> str:
        inner = m.group(0)[1:-1].strip()
        return m.group(0) if inner in known else " " * len(m.group(0))
    return _QUOTED.sub(blank, text)


def _quoted_phrase(text: str, start: int, end: int) -> bool:
    """Whether a mention sits inside a quoted phrase (「控え室へ行こう」), not a quoted name (「控え室」に)."""
    for m in _QUOTED.finditer(text):
        if m.start() < start and end < m.end() and text[m.start() + 1:m.end() - 1].strip() != text[start:end]:
            return True
    return False


def explicit_moves(text: str, names: SceneNames, place: str, exits: Sequence[str]) -> list[str]:
    """Places the player clearly says they are going to (the current place
    included, so that a caller can answer "already here"), in text order.
    A quoted or reported movement phrase (「控え室に行こう」って言ったら？) is not the player going."""
    text = unstretched(text)
    found: list[str] = []
    candidates = [place, *exits]
    for start, end, pid in place_mentions(text, names, candidates):
        if _quoted_phrase(text, start, end) or _REPORTED.match(text[end:]):
            continue
        if compiled("moves", "possessor_after").match(text[end:]):
            continue        # 「お店の地図、絶対入れてね」: the shop's map is spoken of, not going to the shop
        talk = bool(_TALK_PLACE.match(text[end:]))
        if talk and WH.search(text, end, _clause_end(text, end)):
            continue        # 「控え室で何話したいの？」: what would be said there is asked, not going there
        if committing_verb_after(text, end, look=True, talk=talk, permission=True) and not cancelled(text, end):
            found.append(pid)
    # "ママに会いに行こう": a person who is not here, found in one reachable place
    for cid, person_names in names.characters.items():
        where = [p for p in names.located.get(cid, ()) if p in exits]
        if len(where) != 1 or place in names.located.get(cid, ()):
            continue
        for start, end, _ in find_names(text, [nfkc(n) for n in person_names]):
            if _quoted_phrase(text, start, end) or _REPORTED.match(text[end:]):
                continue
            m = _PERSON_DESTINATION.match(text[end:])
            if m and m.group(0).strip() and committing_verb_after(text, end + m.end(), window=6) \
                    and not cancelled(text, end):
                found.append(where[0])
    # 「湯に入ろう」: a phrase the scenario gives for going to one of the exits
    found += [pid for pid in names.says_entering(text, exits) if not cancelled(text)]
    return list(dict.fromkeys(found))


def movement_cue(text: str, names: SceneNames, place: str, exits: Sequence[str], target: str | None = None) -> bool:
    """Whether anything in the text supports a move (to `target` when given):
    a destination named with no verb at all, or a committing movement
    phrasing.  A destination that only appears in a question or a negation
    (控え室には行ったことある？) is no support."""
    text = unstretched(text)
    targets = [target] if target else list(exits)
    if cancelled(text):
        return False
    if explicit_moves(text, names, place, targets):
        return True
    mentions = place_mentions(text, names, targets)
    for _start, end, _pid in mentions:
        rest = _TRAILING.sub("", text[end:_clause_end(text, end)])
        if _BARE_DESTINATION.match(rest):
            return True     # 控え室へ！ / 奥まで
    if _GENERIC_MOVE.search(text) and not mentions:
        return True
    for match in MOVE_VERB_RE.finditer(text):
        if _PURPOSE_BEFORE.search(text[:match.start()]):
            continue
        if _committing(text[match.end():]) and not mentions:
            return True
    return False


# ---------------------------------------------------------------- leaving

# (not 行ってきます: said on the way to come back — 「トイレ行ってきます」 — it leaves nobody)
_FAREWELL_END = compiled("moves", "farewell_end")
_QUESTION_END = lazyre.compile(r"[？?]\s*$")
# A sentence that is a farewell and nothing else but a lead-in (「んじゃ、おやすみ〜。」「じゃあ、失礼します。」)
_FAREWELL_ALONE = compiled("acts", "farewell_alone")
_APOLOGY_ONLY = compiled("moves", "apology_only")
_LEAVING_CONTEXT = compiled("moves", "leaving_context")
_FAREWELL_ANY = compiled("moves", "farewell_any")
# Saying one will come back (また来るよ) is a farewell, unless it answers a character's question about it.
_RETURN_PROMISE = compiled("moves", "return_promise")


def answers_return_question(text: str, asked: str | None) -> bool:
    """Whether a farewell-like line only promises to come back in answer to a character's question about
    coming back (「また来てくれるんでしょ？」→「もちろん、また来るよ」): an answer, not a goodbye.  A line
    that also says goodbye (ごちそうさま, またね, 帰ります) is still one."""
    if not asked or not compiled("moves", "return_asked").search(asked):
        return False
    text = unstretched(text)
    return bool(_RETURN_PROMISE.search(text)) and not _FAREWELL_ANY.search(text)


# 「やっぱ行く」「行きます」「そっち行こう」: going, with no place named (the invitation names it).
_BARE_GO = compiled("moves", "bare_go")


_RETURN_VERB = compiled("moves", "return_verb")


def goes_back(text: str, names: SceneNames, place: str, exits: Sequence[str]) -> bool:
    """「そろそろ戻ろうかな」 with no place named: going back (the caller knows where from).  Not a question
    about it (戻るの？), not a hedge taken back, not another person going (ママが戻ったら)."""
    text = unstretched(text)
    if place_mentions(text, names, [place, *exits]) or cancelled(text):
        return False
    for match in _RETURN_VERB.finditer(text):
        if compiled("moves", "topic_before_return").search(text[:match.start()]):
            continue        # 「ほな写真の話戻ろか」: back to a topic, not to a place
        before = text[max(0, match.start() - 3):match.start()]
        if compiled("moves", "someone_before").search(before) and \
                not compiled("moves", "self_before").search(text[:match.start()]):
            continue        # someone else going back
        if _committing(text[match.end():]):
            return True
    return False


# 「ちょっと覗いてもいいかな」「見てみたい」「お邪魔していい？」: taking up an invitation to a place by looking in.
_BARE_LOOK = compiled("moves", "bare_look")


def goes_along(text: str) -> bool:
    """The line ends by agreeing to go somewhere it does not name (after an invitation that names it)."""
    stripped = _TRAILING.sub("", unstretched(text))
    return bool(_BARE_GO.search(stripped) or _BARE_LOOK.search(stripped)) and not cancelled(stripped)
_VOLITIONAL_END = compiled("moves", "volitional_end")


def without_trailing_calls(text: str, names: SceneNames | None) -> str:
    """The line without the names it ends by calling (「おやすみなさい、ママさん、葵さん」 → 「おやすみなさい」):
    whom a goodbye is said to is not what it says."""
    if names is None:
        return text
    called = sorted({nfkc(n) for person in names.characters.values() for n in person}, key=len, reverse=True)
    if not called:
        return text
    pattern = re.compile(r"[、,\s]+(?:" + "|".join(re.escape(n) for n in called) + r")(?:"
                         + word_class("honorifics").alternation + r")?" + source_of("moves", "trailing_call_marks"))
    while True:
        shorter = pattern.sub("", text)
        if shorter == text:
            return text
        text = shorter


def farewell(text: str, names: SceneNames | None = None) -> bool:
    """The sentence ends with a farewell (失礼します, お邪魔しました, 帰るね …), also one said to someone by name
    (「おやすみなさい、ママさん」), not asked about (失礼しますって言うの？) and not quoted (「失礼します」); or a
    sentence of the line is a farewell of its own and what follows asks nothing (「んじゃ、おやすみ〜。傘借りてくね」)."""
    if _said_farewell(text, names):
        return True
    return _ends_farewell(text, names)


def _said_farewell(text: str, names: SceneNames | None) -> bool:
    """Whether a sentence before the last is a farewell of its own and no sentence after it asks anything."""
    pieces = [p for p in re.findall(r"[^。！!？?\n]+[。！!？?\n]*", unstretched(text)) if p.strip()]
    for i, piece in enumerate(pieces[:-1]):
        rest = "".join(pieces[i + 1:])
        if _FAREWELL_ALONE.match(piece.strip()) and not _QUESTION_END.search(rest.strip()) and \
                _ends_farewell(piece, names):
            return True
    return False


def _ends_farewell(text: str, names: SceneNames | None) -> bool:
    stripped = _TRAILING.sub("", without_trailing_calls(unstretched(text), names))
    if _QUESTION_END.search(stripped):
        if not _VOLITIONAL_END.search(stripped):
            return False
        stripped = re.sub(r"[？?\s]+$", "", stripped)
    if not stripped or stripped.endswith(("」", "』", "\"")):
        return False
    found = _FAREWELL_END.search(stripped)
    if found and _APOLOGY_ONLY.match(found.group(0)) and not _LEAVING_CONTEXT.search(stripped[:found.start()]):
        return False        # 「失礼しました」 alone, after a rude question, is an apology, not a goodbye
    if found and compiled("moves", "bought_in_kana").search(stripped):
        return False        # 「700えん？じゃあかえるね！」: 買える written in kana after a sum, not 帰る
    if found and compiled("moves", "brief_excuse").search(stripped[:found.start()]):
        return False        # 「ママ、ちょっと失礼します」: excused for a moment, not a goodbye
    if found and later(stripped, found.start()):
        return False        # 「もう一杯だけ飲んだら帰ろうかな」: a plan for after something else, not a goodbye now
    if found and takes_home(stripped[:found.start()]):
        return False        # 「そのまま持って帰ります」: a thing taken home, not a goodbye now
    return bool(found)


def takes_home(before: str) -> bool:
    """Whether the words right before a leaving word take something home or bring someone (lexicon taken_home:
    持って, 買って, 連れて)."""
    return any(before.endswith(entry) for entry in word_class("taken_home").entries)


def later(text: str, at: int) -> bool:
    """Whether the leaving or going at `at` is put off until something else is done (its clause follows a
    condition or an 'after': 「飲んだら帰ろう」「食べてから行く」)."""
    return bool(compiled("later", "prerequisite").search(text[:at]))


_LEAVE_CUE = compiled("moves", "leave_cue")
_MEAL_THANKS = compiled("moves", "meal_thanks")


_COME_AGAIN = compiled("moves", "come_again")
_LEAVE_LEAD = compiled("moves", "leave_lead")
_CLOSING_BEFORE = compiled("moves", "closing_before")


def said_in_passing(text: str) -> bool:
    """A goodbye that is only thanks for what was had (「ごちそうさまでした」) or only a promise to come again, with no
    lead of leaving (「今日初めて来たんですけど、また来ますね」), and no other word of leaving: said while the tab is
    unpaid, the bill comes and the visit goes on.  Both together (「ごちそうさま、また来ます」) are the goodbye."""
    plain = unstretched(text)
    thanks, again = _MEAL_THANKS.search(plain), _COME_AGAIN.search(plain)
    if (thanks is None) == (again is None) or (again is not None and _LEAVE_LEAD.search(plain)):
        return False
    found = thanks or again
    assert found is not None
    rest = plain[:found.start()] + plain[found.end():]
    return not farewell(rest) and not any(_LEAVE_CUE.finditer(rest))


def come_again_among_talk(text: str) -> bool:
    """A promise to come again said in passing (said_in_passing) after the line has said other things in sentences
    before it (「それ聞けてうれしいです。…ご近所なので、また買いに来ますね」): a warm word in the talk, not the
    goodbye, even with the tab settled — leaving is said on its own, with a lead (「じゃあ、また来ますね」), or after
    words that close the visit (「美味しかった！また来ます」: moves.closing_before)."""
    plain = unstretched(text)
    again = _COME_AGAIN.search(plain)
    if again is None or not said_in_passing(text):     # (with thanks for the meal too, it is the goodbye)
        return False
    start = max(plain.rfind(mark, 0, again.start()) for mark in "。！!？?\n")
    return start > 0 and bool(re.sub(r"[\W_]", "", plain[:start])) and not _CLOSING_BEFORE.search(plain[:start + 1])


def leave_cue(text: str) -> bool:
    """Anything that supports a 離脱 the classifier chose (nothing, when the
    text takes the leaving back: 帰ろうと思ったけど、まだいる)."""
    text = unstretched(text)
    if cancelled(text) or compiled("moves", "bought_in_kana").search(text):
        return False
    return farewell(text) or any(not later(text, m.start()) and not takes_home(text[:m.start()])
                                 for m in _LEAVE_CUE.finditer(text))


# ---------------------------------------------------------------- agreeing

_AGREE = compiled("moves", "agree")
_FILLER = compiled("moves", "agree_filler")
_NEGATIVE = compiled("moves", "agree_not")


def short_agreement(text: str, limit: int = 16) -> bool:
    """A short yes (うん、行ってみよう / いいよ、そうしよう) with no refusal in it."""
    stripped = _TRAILING.sub("", text)
    if not stripped or len(stripped) > limit or _NEGATIVE.search(stripped):
        return False
    parts = [p for p in re.split(r"[、,。！!？?\s]+", stripped) if p]
    if not parts:
        return False
    agreed = False
    for part in parts:
        part = compiled("moves", "agree_tail").sub("", part) or part
        if _AGREE.match(part):
            agreed = agreed or not _FILLER.match(part)
        elif not _FILLER.match(part):
            return False
    return agreed


_TAKE_UP = compiled("moves", "take_up")
_TAKE_UP_NOT = compiled("moves", "take_up_not")


def takes_up(text: str, limit: int = 30) -> bool:
    """A yes to an invitation that names no place: 「え、いいんですか？じゃあ、ちょっとだけ」「ぜひ！」「お言葉に甘えて」.
    Only for an invitation that is open (the caller's check): it is no request to go anywhere by itself."""
    stripped = _TRAILING.sub("", unstretched(text))
    if not stripped or len(stripped) > limit or _TAKE_UP_NOT.search(compiled("moves", "apology_word").sub("", stripped)):
        return False
    return bool(_TAKE_UP.search(stripped))


_INVITATION_FORM = compiled("moves", "invitation_form")


def invited_place(line_text: str, names: SceneNames, exits: Sequence[str]) -> str | None:
    """The reachable place a line invites the player to (F1「続きは控え室で
    話さない？」 → 控え室), or None."""
    text = nfkc(line_text)
    found = []
    for _start, end, pid in place_mentions(text, names, exits):
        rest = text[end:_clause_end(text, end)]
        if compiled("moves", "invitation_particle").match(rest) and _INVITATION_FORM.search(rest):
            found.append(pid)
    found = list(dict.fromkeys(found))
    return found[0] if len(found) == 1 else None


def clause_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for i, ch in enumerate(text):
        if ch in CLAUSE_BREAK:
            spans.append((start, i + 1))
            start = i + 1
    if start < len(text):
        spans.append((start, len(text)))
    return spans


__all__ = [
    "cancelled", "SceneNames", "explicit_moves", "movement_cue", "farewell", "leave_cue", "short_agreement", "invited_place",
    "place_mentions", "committing_verb_after", "clause_spans",
]
