"""The options offered to one interpretation call, and what a backend returns.

`InterpretChoices.make(rules, state)` turns the rule engine's candidates into
options a classifier can read: a per-call token (A1, A2, … in the engine's
order, assigned before any narrowing and never renumbered), the input it
stands for, a label, examples and narrowing words.  A token means nothing
outside its call: results are mapped back with the same `InterpretChoices`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..llm.errors import ErrorKind  # noqa: F401  (re-exported: an Interpretation's error is one of its kinds)
from ..scenario import GameRules, GameState, PlayerInput
from ..scenario import token as make_token
from ..scenario.inputs import NONE

NONE_ANSWER = "none"

Source = Literal["input", "answered"]


def move_label(place: str) -> str:
    return f"場所を移る：「{place}」へ行く"


LEAVE_LABEL = "今いる場所を離れる"


@dataclass(frozen=True)
class Option:
    token: str
    input: PlayerInput
    label: str
    examples: tuple[str, ...] = ()
    words: tuple[str, ...] = ()          # narrowing words (intents only; empty = no narrowing)
    source: Source = "input"             # input_candidates or answered_intents
    names: tuple[str, ...] = ()          # for moves: the place's id and aliases

    @property
    def is_intent(self) -> bool:
        return self.input.is_intent

    def to_dict(self) -> dict[str, Any]:
        return {"token": self.token, "input": str(self.input), "label": self.label, "source": self.source}


@dataclass(frozen=True)
class Person:
    id: str
    name: str


@dataclass(frozen=True)
class InterpretContext:
    """What a prompt says about the scene besides the options."""
    place: str
    people: tuple[Person, ...] = ()
    last_speaker: str | None = None      # display name
    last_line: str | None = None         # the last line said to the player
    addressee: str | None = None         # character id, when the player addressed someone
    asked: str | None = None             # the open question a character just put to the player, if any
    invited: str | None = None           # a reachable place a character recently invited the player to
    came_from: str | None = None         # the place the player came here from (「戻ろう」 goes back there)

    @classmethod
    def make(cls, rules: GameRules, state: GameState, addressee: str | None = None, *,
             recent: Recent | None = None) -> InterpretContext:
        sc = rules.scenario
        people = tuple(Person(cid, sc.characters[cid].name) for cid in rules.people(state.place)
                       if cid in sc.characters)
        speaker = text = None
        if state.last_line is not None and state.last_line in sc.lines:
            line = sc.lines[state.last_line]
            character = sc.characters.get(line.speaker)
            speaker = character.name if character is not None else line.speaker
            text = line.text
        if recent is not None and recent.last_line:
            # what the conversation said last (a reaction, an answer), not only the last scripted line
            speaker, text = recent.last_speaker or speaker, recent.last_line
        return cls(state.place, people, speaker, text, addressee, recent.asked if recent else None,
                   recent.invited if recent else None, recent.came_from if recent else None)


@dataclass(frozen=True)
class Recent:
    """What the conversation layer knows about the last turns that reading a line needs: the last line a
    character said (any kind), the open question, and a recent invitation to a place."""
    last_line: str | None = None
    last_speaker: str | None = None     # display name
    asked: str | None = None
    invited: str | None = None
    came_from: str | None = None


@dataclass(frozen=True)
class InterpretChoices:
    options: tuple[Option, ...]
    place: str = ""
    exits: tuple[str, ...] = ()

    @classmethod
    def make(cls, rules: GameRules, state: GameState) -> InterpretChoices:
        sc = rules.scenario
        inputs, answered = rules.candidates_split(state)
        options = []
        sourced: list[tuple[PlayerInput, Source]] = \
            [(c, "input") for c in inputs] + [(c, "answered") for c in answered]
        for index, (candidate, source) in enumerate(sourced):
            tok = make_token(index)
            if candidate.is_intent:
                intent = sc.intents[candidate.target_id]
                options.append(Option(tok, candidate, intent.description, tuple(intent.examples),
                                      tuple(intent.words), source))
            elif candidate.is_move:
                place = sc.places.get(candidate.target_id)
                names = tuple(dict.fromkeys([candidate.target_id, *(place.aliases if place else ())]))
                options.append(Option(tok, candidate, move_label(candidate.target_id), (), (), source, names))
            else:
                options.append(Option(tok, candidate, LEAVE_LABEL, (), (), source))
        return cls(tuple(options), state.place, rules.exits(state.place))

    # ---- reading

    def __len__(self) -> int:
        return len(self.options)

    def __iter__(self):
        return iter(self.options)

    @property
    def tokens(self) -> list[str]:
        return [o.token for o in self.options]

    def by_token(self, token: str | None) -> Option | None:
        if token is None:
            return None
        for option in self.options:
            if option.token == token:
                return option
        return None

    def input_for(self, token: str | None) -> PlayerInput:
        option = self.by_token(token)
        return option.input if option is not None else NONE

    def find(self, input: PlayerInput) -> Option | None:
        for option in self.options:
            if option.input == input:
                return option
        return None

    def contains(self, input: PlayerInput) -> bool:
        return self.find(input) is not None

    def token_of(self, input: PlayerInput) -> str | None:
        option = self.find(input)
        return option.token if option is not None else None

    # ---- narrowing (never renumbers)

    def keep(self, predicate: Callable[[Option], bool]) -> InterpretChoices:
        return replace(self, options=tuple(o for o in self.options if predicate(o)))

    def without(self, tokens: Iterable[str]) -> InterpretChoices:
        drop = set(tokens)
        return self.keep(lambda o: o.token not in drop)

    def to_list(self) -> list[dict[str, Any]]:
        return [o.to_dict() for o in self.options]


# ---------------------------------------------------------------- results

@dataclass
class Interpretation:
    """One interpretation call's outcome, the same for every backend."""
    input: PlayerInput = NONE
    token: str | None = None                       # the option token chosen (None for none)
    scores: dict[str, float] = field(default_factory=dict)   # per token (and "none"), when the backend has them
    rule: str | None = None                        # refinement rule applied, if any
    elapsed_ms: float = 0.0
    error: str | None = None                       # ErrorKind when the call failed (input is then なし)
    detail: str | None = None                      # error message or a note
    backend: str = ""
    answer: str | None = None                      # the raw answer (model label) before mapping
    examples_dropped: bool = False                 # prompt sent without examples to fit the context
    prompt_tokens: int | None = None
    model_input: PlayerInput | None = None         # what the backend chose, before refinement
    narrowed: dict[str, list[str]] = field(default_factory=dict)   # narrowing kind → tokens it removed
    phases_ms: dict[str, float] = field(default_factory=dict)     # narrowing / model / refinement
    offered: list[str] = field(default_factory=list)              # tokens the backend was offered
    best: float = 0.0                              # top option score (none excluded)
    margin: float = 0.0                            # its lead over the runner-up option
    unsure: bool = False                           # in the band where a cascade asks a model (confidence.py)
    mode: str | None = None                        # how the answer was constrained (llm.choice.ChoiceMode)
    circuit: str | None = None                     # the model server's circuit breaker after the call (llm.breaker)

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": str(self.input), "token": self.token,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
            "rule": self.rule, "elapsed_ms": round(self.elapsed_ms, 3), "error": self.error, "detail": self.detail,
            "backend": self.backend, "answer": self.answer, "examples_dropped": self.examples_dropped,
            "prompt_tokens": self.prompt_tokens,
            "model_input": None if self.model_input is None else str(self.model_input),
            "narrowed": {k: list(v) for k, v in self.narrowed.items()}, "offered": list(self.offered),
            "phases_ms": {k: round(v, 3) for k, v in self.phases_ms.items()}, "mode": self.mode,
            "best": round(self.best, 4), "margin": round(self.margin, 4), "unsure": self.unsure,
            "circuit": self.circuit,
        }
