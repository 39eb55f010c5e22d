"""``lexical+<model>``: the embedded classifier first, a model only when it is unsure.

The lexical backend answers every turn in about a millisecond.  When its
result falls in the unsure band (see `confidence`), the configured model is
asked with the same options; a model answer replaces the lexical one, and a
model failure (timeout, unavailable, the circuit breaker open: llm/breaker.py,
…) keeps the lexical answer, so the game never waits on or breaks with the
model.  A lexical move or 離脱 is
never sent on (those come from phrasing rules).
"""
from __future__ import annotations

import time
from typing import Any

from ..confidence import Band
from ..options import Interpretation, InterpretChoices, InterpretContext
from .base import Backend, elapsed_ms
from .lexical import LexicalBackend


class CascadeBackend:
    def __init__(self, model: Backend, *, lexical: LexicalBackend | None = None, band: Band | None = None) -> None:
        self.lexical = lexical or LexicalBackend()
        self.model = model
        self.band = band or Band()
        self.name = f"lexical+{getattr(model, 'name', 'model')}"

    @property
    def meaning(self):
        return self.lexical.meaning

    @meaning.setter
    def meaning(self, value) -> None:
        self.lexical.meaning = value

    def prepare(self, scenario: Any) -> None:
        self.lexical.prepare(scenario)
        prepare = getattr(self.model, "prepare", None)
        if callable(prepare):
            prepare(scenario)

    def circuit_state(self) -> str | None:
        state = getattr(self.model, "circuit_state", None)
        return state() if callable(state) else None

    def interpret(self, text: str, choices: InterpretChoices, context: InterpretContext) -> Interpretation:
        start = time.perf_counter()
        first = self.lexical.interpret(text, choices, context)
        if not first.unsure or first.input.moves_away:
            first.backend = self.name
            first.detail = first.detail or "lexical: sure"
            first.circuit = self.circuit_state()
            return first
        second = self.model.interpret(text, choices, context)
        if second.error is not None:
            # A failed or refused model call (the circuit open included) keeps the lexical reading.
            first.backend = self.name
            first.detail = f"lexical kept: model {second.error}: {second.detail or ''}".strip()
            first.circuit = second.circuit
            first.elapsed_ms = elapsed_ms(start)
            return first
        second.backend = self.name
        second.detail = (f"model asked (lexical unsure: best {first.best:.2f}, margin {first.margin:.2f}, "
                         f"lexical {first.input})")
        second.unsure = True
        second.elapsed_ms = elapsed_ms(start)
        return second
