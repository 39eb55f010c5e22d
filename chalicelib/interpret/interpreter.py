"""The turn-level entry point the game loop calls.

    interpreter = Interpreter(rules)                      # lexical backend
    interpreter = Interpreter(rules, build_backend(name, **options))  # a model backend
    turn = interpreter.interpret_turn(text, state, addressee=None)
    step = rules.handle(turn.input, state, turn.addressee)

One turn: candidates from the state → addressee detection and narrowing →
word narrowing → backend → refinement → the result must be one of the
call's candidates (after addressee narrowing, before word narrowing), else
なし.  A move to the current place is answered before any backend call with
``移動:<current place>``, which `GameRules.handle` turns into its "already
here" notice.  Nothing here raises for a backend failure: the input is then
なし and the debug record says why.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..scenario import GameRules, GameState, PlayerInput
from ..scenario.inputs import NONE
from ..turn_record import (
    AddresseeRecord,
    BackendRecord,
    CandidateRecord,
    InterpretationRecord,
    NarrowedRecord,
    NarrowingRecord,
)
from .addressee import AddresseeFound, addressee_narrowing, detect_addressee
from .backends import Backend, LexicalBackend
from .backends.base import elapsed_ms
from .cues import SceneNames
from .options import ErrorKind, Interpretation, InterpretChoices, InterpretContext, Recent
from .refine import NOT_A_CANDIDATE, SAME_PLACE, RefinedInterpreter
from .related import IntentMeaning
from .text import WordMatcher, without_asides


@dataclass
class TurnResult:
    input: PlayerInput                 # what to pass to GameRules.handle
    addressee: str | None              # character id to pass to handle (detected or given), or None
    interpretation: Interpretation
    debug: InterpretationRecord        # the record of the whole turn (the debug view's interpretation)

    @property
    def rule(self) -> str | None:
        return self.interpretation.rule

    @property
    def error(self) -> str | None:
        return self.interpretation.error

    @property
    def already_here(self) -> bool:
        return self.interpretation.rule == SAME_PLACE


class Interpreter:
    def __init__(self, rules: GameRules, backend: Backend | None = None, *, variant_words: bool = True,
                 refine: bool = True, matcher: WordMatcher | None = None, meaning: bool | None = None) -> None:
        self.rules = rules
        self.backend: Backend = backend if backend is not None else LexicalBackend(variant_words=variant_words)
        prepare = getattr(self.backend, "prepare", None)
        if callable(prepare):
            prepare(rules.scenario)
        self.names = SceneNames.of(rules.scenario)
        # one meaning index for narrowing and the lexical backend (built by its prepare when it has one)
        related = None
        if meaning is None:
            meaning = variant_words      # the article's raw matching (--plain-words) is measured without it
        if meaning:
            related = getattr(self.backend, "meaning", None) or IntentMeaning.of(rules.scenario)
        elif hasattr(self.backend, "meaning"):
            self.backend.meaning = None
        self.related = related
        self.refined = RefinedInterpreter(self.backend, self.names, matcher=matcher, variant_words=variant_words,
                                          rules=refine, meaning=related)
        self._warm()

    def _warm(self) -> None:
        """Compile the scenario's words now (and load the reading dictionary),
        so the first player's turn does not pay for it."""
        from .text import TextForms
        forms = TextForms.of("")
        matchers = [self.refined.matcher, getattr(self.backend, "matcher", None)]
        for intent in self.rules.scenario.intents.values():
            for matcher in matchers:
                if matcher is not None and intent.words:
                    matcher.hits(forms, tuple(intent.words))

    def choices(self, state: GameState) -> InterpretChoices:
        return InterpretChoices.make(self.rules, state)

    def interpret_turn(self, text: str, state: GameState, addressee: str | None = None, *,
                       recent: Recent | None = None) -> TurnResult:
        """`recent`: what the conversation said last (its open question, a recent invitation), when the
        caller keeps a conversation (chalicelib/conversation); without it the last scripted line is used."""
        start = time.perf_counter()
        text = without_asides(text)      # （笑）（小声） say how, not what
        t = time.perf_counter()
        choices = InterpretChoices.make(self.rules, state)
        candidates_ms = elapsed_ms(t)

        t = time.perf_counter()
        try:
            found = detect_addressee(text, self.rules, state, addressee)
        except Exception:
            found = AddresseeFound(None, None)
        offered, removed_by_addressee = addressee_narrowing(choices, self.rules, state, found.character)
        addressee_ms = elapsed_ms(t)

        context = InterpretContext.make(self.rules, state, found.character, recent=recent)
        try:
            result = self.refined.interpret(text, offered, context)
        except Exception as exc:      # a bug in refinement must not stop the game either
            result = Interpretation(NONE, error=ErrorKind.INTERNAL, detail=f"{type(exc).__name__}: {exc}",
                                    backend=getattr(self.backend, "name", ""))
        result.narrowed = {"addressee": removed_by_addressee, **result.narrowed}
        if result.rule != SAME_PLACE and result.input != NONE and not offered.contains(result.input):
            result.detail = f"{result.input} is not a candidate of this call"
            result.input, result.token, result.rule = NONE, None, NOT_A_CANDIDATE
        result.token = choices.token_of(result.input)
        total_ms = elapsed_ms(start)
        phases = result.phases_ms
        ms = {
            "candidates": candidates_ms,
            "narrowing": addressee_ms + phases.get("narrowing", 0.0),
            "model": phases.get("model", 0.0),
            "refinement": phases.get("refinement", 0.0),
            "total": total_ms,
        }
        debug = self._debug(text, state, choices, found, removed_by_addressee, result, ms)
        return TurnResult(result.input, found.character, result, debug)

    def _debug(self, text: str, state: GameState, choices: InterpretChoices, found: AddresseeFound,
               removed_by_addressee: list[str], result: Interpretation,
               ms: dict[str, float]) -> InterpretationRecord:
        by_token = {o.token: str(o.input) for o in choices}
        from .ja import sudachi
        return InterpretationRecord(
            text=text,
            # Which analyser read the input (None: surface matching only), so a deployed turn shows it.
            analyser=sudachi.record(text),
            place=state.place,
            addressee=AddresseeRecord(character=found.character, how=found.how, ignored=found.ignored),
            candidates=[CandidateRecord(token=o.token, input=str(o.input), label=o.label, source=o.source)
                        for o in choices],
            narrowing=NarrowingRecord(
                addressee=[NarrowedRecord(token=t, input=by_token.get(t)) for t in removed_by_addressee],
                words=[NarrowedRecord(token=t, input=by_token.get(t)) for t in result.narrowed.get("words", [])]),
            offered=list(result.offered),
            backend=BackendRecord(
                name=result.backend,
                choice=choices.token_of(result.model_input) if result.model_input is not None else None,
                input=None if result.model_input is None else str(result.model_input),
                answer=result.answer,
                scores={k: round(v, 4) for k, v in result.scores.items()},
                error=result.error,
                detail=result.detail,
                prompt_tokens=result.prompt_tokens,
                mode=result.mode,
                circuit=result.circuit),
            rule=result.rule,
            input=str(result.input),
            token=result.token,
            error=result.error,
            examples_dropped=result.examples_dropped,
            ms={k: round(v, 3) for k, v in ms.items()},
        )
