"""`RefinedInterpreter`: word narrowing before the backend, rules after it.

The rules cover what a classifier gets wrong and what must never happen by
accident, not Japanese at large:

``example_match``
    The input is nearly identical to one example (punctuation removed, at
    least 6 characters, longest common subsequence at least 90 % of the
    longer string): that example's intent, when exactly one intent matches.
``explicit_move``
    A reachable place (id or alias, or a person found only there) plus a
    clear movement phrasing: that move, whatever the backend said.
``same_place``
    The same, naming the current place: a move to it (the rules answer with
    an "already here" notice), decided before any backend call.
``farewell``
    The sentence ends with a farewell, not asked about: 離脱.
``agreement``
    A short yes right after a line inviting the player to a reachable place
    (F1「続きは控え室で話さない？」→「うん、行ってみよう」): that move.
``unfounded_move`` / ``unfounded_leave``
    The backend chose a move (or 離脱) with no destination, movement or
    leaving cue in the text: なし.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from ..scenario import PlayerInput
from ..scenario.inputs import LEAVE, NONE
from .backends.base import Backend, elapsed_ms
from .confidence import best_and_margin
from .cues import (
    SceneNames,
    answers_return_question,
    explicit_moves,
    farewell,
    goes_along,
    goes_back,
    invited_place,
    leave_cue,
    movement_cue,
    player_words,
    short_agreement,
    takes_up,
    without_quoted_phrases,
)
from .negated import declined_after
from .options import Interpretation, InterpretChoices, InterpretContext
from .related import IntentMeaning
from .text import TextForms, WordMatcher, lcs_length, make_matcher, nfkc, strip_punctuation

EXAMPLE_MATCH = "example_match"
EXPLICIT_MOVE = "explicit_move"
SAME_PLACE = "same_place"
FAREWELL = "farewell"
AGREEMENT = "agreement"
INVITATION = "invitation"
GOING_BACK = "going_back"
ANSWER_NOT_LEAVE = "answer_not_leave"
UNFOUNDED_MOVE = "unfounded_move"
UNFOUNDED_LEAVE = "unfounded_leave"
NOT_A_CANDIDATE = "not_a_candidate"

RULES = (EXAMPLE_MATCH, EXPLICIT_MOVE, SAME_PLACE, FAREWELL, AGREEMENT, INVITATION, GOING_BACK, ANSWER_NOT_LEAVE,
         UNFOUNDED_MOVE, UNFOUNDED_LEAVE)

MIN_EXAMPLE_CHARS = 6
EXAMPLE_RATIO = 0.9


def example_intent(text: str, choices: InterpretChoices) -> PlayerInput | None:
    """The one intent with an example nearly identical to `text`, or None."""
    core = strip_punctuation(text)
    if len(core) < MIN_EXAMPLE_CHARS:
        return None
    matched: list[PlayerInput] = []
    for option in choices:
        if not option.is_intent:
            continue
        for example in option.examples:
            other = strip_punctuation(example)
            longer = max(len(core), len(other))
            needed = EXAMPLE_RATIO * longer
            # cheap bounds first: the LCS is at most the shorter length and the shared characters
            if min(len(core), len(other)) < needed or _shared_chars(core, other) < needed:
                continue
            if lcs_length(core, other) >= needed:
                matched.append(option.input)
                break
    return matched[0] if len(set(matched)) == 1 else None


def _shared_chars(a: str, b: str) -> int:
    counts: dict[str, int] = {}
    for ch in a:
        counts[ch] = counts.get(ch, 0) + 1
    shared = 0
    for ch in b:
        if counts.get(ch, 0) > 0:
            counts[ch] -= 1
            shared += 1
    return shared


@dataclass(frozen=True)
class Decision:
    input: PlayerInput
    rule: str | None


def same_place_move(text: str, names: SceneNames, place: str, exits: Iterable[str]) -> bool:
    found = explicit_moves(player_words(nfkc(text)), names, place, list(exits))
    return found == [place]


def refine(chosen: PlayerInput, text: str, choices: InterpretChoices, context: InterpretContext,
           names: SceneNames) -> Decision:
    """Apply the rules to the backend's choice.  `choices` are the call's
    candidates before word narrowing."""
    normalised = player_words(nfkc(text))
    exits = [o.input.target for o in choices if o.input.is_move]
    example = example_intent(text, choices)
    if example is not None:
        return Decision(example, EXAMPLE_MATCH if example != chosen else None)
    moves = [p for p in explicit_moves(normalised, names, context.place, exits) if p != context.place]
    if len(moves) == 1:
        move = PlayerInput.move(moves[0])
        return Decision(move, EXPLICIT_MOVE if move != chosen else None)
    has_leave = choices.contains(LEAVE)
    answering = answers_return_question(normalised, context.asked)
    if has_leave and not answering and (farewell(normalised, names) or names.says_leaving(normalised, context.place)):
        return Decision(LEAVE, FAREWELL if chosen != LEAVE else None)
    if context.last_line and short_agreement(normalised):
        invited = invited_place(context.last_line, names, exits)
        if invited is not None:
            move = PlayerInput.move(invited)
            return Decision(move, AGREEMENT if move != chosen else None)
    if context.invited in exits and (short_agreement(normalised) or goes_along(normalised) or takes_up(normalised)):
        # 「ごめん、冗談。やっぱ行く」 a turn or two after turning an invitation down
        move = PlayerInput.move(context.invited)   # type: ignore[arg-type]
        return Decision(move, INVITATION if move != chosen else None)
    if context.came_from in exits and goes_back(normalised, names, context.place, exits):
        # 「そろそろ戻ろうかな」: back where the player came from
        move = PlayerInput.move(context.came_from)   # type: ignore[arg-type]
        return Decision(move, GOING_BACK if move != chosen else None)
    if chosen.is_leave and answering:
        return Decision(NONE, ANSWER_NOT_LEAVE)
    # A model's move or leave needs the player's own words for it, not words they quote.
    own = without_quoted_phrases(normalised, names)
    if chosen.is_move and not movement_cue(own, names, context.place, exits, chosen.target):
        return Decision(NONE, UNFOUNDED_MOVE)
    if chosen.is_leave and not (leave_cue(own) or names.says_leaving(own, context.place)):
        return Decision(NONE, UNFOUNDED_LEAVE)
    return Decision(chosen, None)


def _only_declined(forms: TextForms, hits) -> bool:
    """Whether every word found is declined right after it (「花束はいらない」, lexicon undone.declined_thing)."""
    return bool(hits) and all(declined_after(forms.nfkc, hit.end) for hit in hits)


class RefinedInterpreter:
    """Wraps a backend: word narrowing, the backend, the rules.

    ``interpret(text, choices, context)`` takes the call's candidates (after
    addressee narrowing, before word narrowing) and returns the backend's
    `Interpretation` with the refined input, the rule applied, the tokens
    word narrowing removed and the time of each phase."""

    def __init__(self, inner: Backend, names: SceneNames, *, matcher: WordMatcher | None = None,
                 variant_words: bool = True, rules: bool = True, meaning: IntentMeaning | None = None) -> None:
        self.inner = inner
        self.names = names
        self.matcher = matcher or make_matcher(variant_words)
        self.rules = rules
        self.meaning = meaning

    def narrow_by_words(self, text: str | TextForms, choices: InterpretChoices) -> tuple[InterpretChoices, list[str]]:
        forms = text if isinstance(text, TextForms) else TextForms.of(text)
        removed: list[str] = []
        related = {m.intent for m in self.meaning.matches(forms.raw)} if self.meaning is not None else set()

        def allowed(option) -> bool:
            if not option.is_intent or not option.words:
                return True
            if self.matcher.allows(forms, option.words):
                if not _only_declined(forms, self.matcher.hits(forms, option.words)):
                    return True
                removed.append(option.token)      # 「ブーケは要らないです」: the thing is declined, not asked about
                return False
            if str(option.input) in related:       # none of its words, but a word near them in meaning
                return True
            removed.append(option.token)
            return False

        return choices.keep(allowed), removed

    def interpret(self, text: str, choices: InterpretChoices, context: InterpretContext) -> Interpretation:
        start = time.perf_counter()
        if self.rules and choices.exits is not None and same_place_move(text, self.names, context.place, choices.exits):
            result = Interpretation(PlayerInput.move(context.place), None, rule=SAME_PLACE,
                                    backend=getattr(self.inner, "name", ""), detail="already here: no model call")
            result.phases_ms = {"narrowing": 0.0, "model": 0.0, "refinement": elapsed_ms(start)}
            result.elapsed_ms = elapsed_ms(start)
            return result
        t = time.perf_counter()
        narrowed, removed = self.narrow_by_words(text, choices)
        narrowing_ms = elapsed_ms(t)
        t = time.perf_counter()
        try:
            result = self.inner.interpret(text, narrowed, context)
        except Exception as exc:        # a backend that breaks its promise still must not break the game
            from .options import ErrorKind
            result = Interpretation(NONE, error=ErrorKind.INTERNAL, detail=f"{type(exc).__name__}: {exc}",
                                    backend=getattr(self.inner, "name", ""))
        model_ms = elapsed_ms(t)
        if not result.best and result.scores:      # model backends: from their probabilities
            result.best, result.margin = best_and_margin(result.scores)
        result.narrowed = {**result.narrowed, "words": removed}
        result.offered = narrowed.tokens
        chosen = result.input
        discarded = chosen != NONE and not narrowed.contains(chosen)
        if discarded:       # a backend may only pick what it was offered
            result.detail = f"{chosen} was not offered to the backend; taken as {NONE}"
            chosen = NONE
        result.model_input = chosen
        t = time.perf_counter()
        if self.rules:
            decision = refine(chosen, text, choices, context, self.names)
        else:
            decision = Decision(chosen, None)
        result.input = decision.input
        result.rule = decision.rule or (NOT_A_CANDIDATE if discarded else None)
        result.token = choices.token_of(decision.input)
        result.phases_ms = {"narrowing": narrowing_ms, "model": model_ms, "refinement": elapsed_ms(t)}
        result.elapsed_ms = elapsed_ms(start)
        return result
