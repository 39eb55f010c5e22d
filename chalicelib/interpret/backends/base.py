"""What every backend shares.

`Backend.interpret(text, choices, context) -> Interpretation` never raises:
a failure becomes an `Interpretation` with input なし and an `error` kind.

`ModelBackend` is the one model backend: the answer labels the model sees,
the prompt and its context budget, the timing and the mapping of the answer
back to the call's options.  The model itself is a `ChoiceModel` of the
model-call layer (`chalicelib.llm`): a server behind a transport, or a model
in this process.
"""
from __future__ import annotations

import logging
import string
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ...llm.choice import ChoiceModel
from ...llm.errors import ErrorKind, ModelCallError
from ...llm.prompt import ANSWER_RESERVE, DEFAULT_CONTEXT_LIMIT, MAX_TEXT_CHARS, PromptFit, fit_prompt
from ...scenario.inputs import NONE
from ..options import NONE_ANSWER, Interpretation, InterpretChoices, InterpretContext
from ..prompts import PromptTemplates

log = logging.getLogger(__name__)


@runtime_checkable
class Backend(Protocol):
    name: str

    def interpret(self, text: str, choices: InterpretChoices, context: InterpretContext) -> Interpretation:
        ...


def elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


# ---------------------------------------------------------------- answer labels

LABEL_SCHEMES = ("tokens", "letters")


@dataclass(frozen=True)
class AnswerSheet:
    """The strings the model may answer: one per option, plus ``none``.

    ``tokens`` uses the option tokens themselves (A1, A2 …).  ``letters`` uses
    one capital letter per option (A1 → A, A2 → B … by token number), which is
    a single token in common tokenizers, so that the first decoding step gives
    a probability for every option.  Letters are kept stable under narrowing
    (they follow the token number, not the position)."""
    answers: dict[str, str]         # option token → answer label
    scheme: str

    @classmethod
    def make(cls, choices: InterpretChoices, scheme: str = "letters") -> AnswerSheet:
        if scheme == "letters":
            numbers = [_token_number(o.token) for o in choices]
            letters = [string.ascii_uppercase[n - 1] for n in numbers if n is not None and 1 <= n <= 26]
            if len(letters) == len(numbers):
                return cls({o.token: letter for o, letter in zip(choices, letters)}, "letters")
        return cls({o.token: o.token for o in choices}, "tokens")

    @property
    def allowed(self) -> list[str]:
        return [*self.answers.values(), NONE_ANSWER]

    def by_token(self, probabilities: dict[str, float]) -> dict[str, float]:
        """Per-label probabilities keyed by option token (and ``none``) instead."""
        scores = {}
        for answer, value in probabilities.items():
            key = NONE_ANSWER if answer == NONE_ANSWER else self.token_for(answer)
            if key is not None:
                scores[key] = value
        return scores

    def token_for(self, answer: str) -> str | None:
        for token, label in self.answers.items():
            if label == answer:
                return token
        return None


def _token_number(token: str) -> int | None:
    if token.startswith("A") and token[1:].isdigit():
        return int(token[1:])
    return None


# ---------------------------------------------------------------- the model backend

class ModelBackend:
    """Prompt, budget, call, map back, around one `ChoiceModel` (``chooser``)."""
    default_labels = "letters"

    def __init__(self, chooser: ChoiceModel, *, context_limit: int | None = None, labels: str | None = None,
                 templates: PromptTemplates | None = None, reserve: int = ANSWER_RESERVE,
                 text_limit: int = MAX_TEXT_CHARS) -> None:
        self.chooser = chooser
        self.name = chooser.name
        self.configured_context_limit = context_limit
        self.labels = labels or self.default_labels
        if self.labels not in LABEL_SCHEMES + ("auto",):
            raise ValueError(f"unknown label scheme {self.labels!r}; expected one of {', '.join(LABEL_SCHEMES)}")
        self.templates = templates or PromptTemplates()
        self.reserve = reserve
        self.text_limit = text_limit
        self._instructions: str | None = None
        self._context_limit: int | None = None

    @property
    def timeout(self) -> float:
        return self.chooser.timeout

    @property
    def current_mode(self) -> str | None:
        """How answers are constrained now, for the debug record (None before a probe, or in process)."""
        return self.chooser.current_mode

    def circuit_state(self) -> str | None:
        """The model server's circuit breaker as the next call would meet it (None: the model has none)."""
        breaker = getattr(getattr(self.chooser, "transport", None), "breaker", None)
        return None if breaker is None else breaker.state

    def describe(self) -> str:
        return f"{self.name} at {self.chooser.describe()}"

    @property
    def instructions(self) -> str:
        if self._instructions is None:
            self._instructions = self.templates.instructions()
        return self._instructions

    def context_limit(self) -> int:
        if self.configured_context_limit:
            return int(self.configured_context_limit)
        if self._context_limit is None:
            try:
                value = self.chooser.context_limit()
            except Exception:
                return DEFAULT_CONTEXT_LIMIT        # ask again next call
            self._context_limit = value or DEFAULT_CONTEXT_LIMIT
        return self._context_limit

    def count_tokens(self, system: str, user: str) -> int:
        return self.chooser.count_tokens(messages(system, user))

    def label_scheme(self, choices: InterpretChoices) -> str:
        """``auto``: option tokens when each is one token of the model, else letters where they are."""
        if self.labels != "auto":
            return self.labels
        for scheme in ("tokens", "letters"):
            sheet = AnswerSheet.make(choices, scheme)
            if sheet.scheme == scheme and self.chooser.single_tokens(sheet.allowed):
                return scheme
        return "letters"

    def fit(self, text: str, choices: InterpretChoices, context: InterpretContext, sheet: AnswerSheet) -> PromptFit:
        addressee = None
        if context.addressee is not None:
            addressee = next((p.name for p in context.people if p.id == context.addressee), context.addressee)
        text = self.chooser.defuse(text)

        def render(with_examples: bool) -> tuple[str, str]:
            return self.instructions, self.templates.prompt(
                text, choices, context, sheet.answers, with_examples=with_examples, addressee=addressee,
                text_limit=self.text_limit)

        return fit_prompt(render, self.count_tokens, self.context_limit(), self.reserve)

    def interpret(self, text: str, choices: InterpretChoices, context: InterpretContext) -> Interpretation:
        start = time.perf_counter()
        result = Interpretation(backend=self.name)
        try:
            if not choices.options:
                result.detail = "no options left to choose from"
                return result
            sheet = AnswerSheet.make(choices, self.label_scheme(choices))
            fit = self.fit(text, choices, context, sheet)
            result.examples_dropped = fit.examples_dropped
            result.prompt_tokens = fit.tokens
            if not fit.fits:
                raise ModelCallError(ErrorKind.CONTEXT_OVERFLOW,
                                     f"prompt needs {fit.tokens} tokens ({fit.counted_by}); "
                                     f"limit {self.context_limit()} less {self.reserve} for the answer")
            choice = self.chooser.choose(messages(fit.system, fit.user), sheet.allowed)
            result.answer = choice.label
            result.scores = sheet.by_token(choice.probabilities)
            if choice.label == NONE_ANSWER:
                result.input = NONE
            else:
                token = sheet.token_for(choice.label)
                if token is None:
                    raise ModelCallError(ErrorKind.INVALID_ANSWER,
                                         f"answer {choice.label!r} is not one of {sheet.allowed}")
                result.token = token
                result.input = choices.input_for(token)
        except ModelCallError as exc:
            result.input, result.token = NONE, None
            result.error, result.detail = exc.kind, exc.message
        except Exception as exc:      # never into the game
            log.exception("%s backend failed", self.name)
            result.input, result.token = NONE, None
            result.error, result.detail = ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}"
        finally:
            result.elapsed_ms = elapsed_ms(start)
            result.mode = self.current_mode
            result.circuit = self.circuit_state()
        return result


def messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
