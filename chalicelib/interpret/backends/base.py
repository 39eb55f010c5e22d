"""What every backend shares.

`Backend.interpret(text, choices, context) -> Interpretation` never raises:
a failure becomes an `Interpretation` with input なし and an `error` kind.

`ModelBackend` is the common part of the three model backends: the answer
labels the model sees, the prompt and its context budget, the timing and
the mapping of the answer back to the call's options.
"""
from __future__ import annotations

import logging
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ...llm.choice import ChoiceMode, choice_body, label_probabilities, read_choice
from ...llm.transport import read_json
from ...scenario.inputs import NONE
from ..choices import NONE_ANSWER, BackendError, ErrorKind, Interpretation, InterpretChoices, InterpretContext
from ..prompts import ANSWER_RESERVE, MAX_TEXT_CHARS, PromptFit, PromptTemplates, fit_prompt

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_LIMIT = 8192
DEFAULT_TIMEOUT = 10.0


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
            if all(n is not None and 1 <= n <= 26 for n in numbers):
                return cls({o.token: string.ascii_uppercase[n - 1] for o, n in zip(choices, numbers)}, "letters")
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


def probabilities_from_logprobs(sheet: AnswerSheet, top: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Per-option probabilities (keyed by option token, plus ``none``) from the first answer position's
    top log-probabilities (`llm.choice.label_probabilities`, mapped back to the options)."""
    return sheet.by_token(label_probabilities(sheet.allowed, top))


# ---------------------------------------------------------------- model backends

class ModelBackend:
    """Prompt, budget, call, map back.  Subclasses implement `_complete` (and
    may implement `_count_tokens` and `_server_context_limit`)."""
    name = "model"
    default_labels = "letters"

    def __init__(self, *, context_limit: int | None = None, timeout: float = DEFAULT_TIMEOUT,
                 labels: str | None = None, templates: PromptTemplates | None = None,
                 reserve: int = ANSWER_RESERVE, text_limit: int = MAX_TEXT_CHARS) -> None:
        self.configured_context_limit = context_limit
        self.timeout = float(timeout)
        self.labels = labels or self.default_labels
        if self.labels not in LABEL_SCHEMES + ("auto",):
            raise ValueError(f"unknown label scheme {self.labels!r}; expected one of {', '.join(LABEL_SCHEMES)}")
        self.templates = templates or PromptTemplates()
        self.reserve = reserve
        self.text_limit = text_limit
        self._instructions: str | None = None
        self._context_limit: int | None = None

    # ---- hooks

    def _complete(self, fit: PromptFit, sheet: AnswerSheet) -> tuple[str, dict[str, float]]:
        raise NotImplementedError

    def _count_tokens(self, system: str, user: str) -> int:
        raise NotImplementedError     # → character count

    def _server_context_limit(self) -> int | None:
        return None

    def _label_scheme(self, choices: InterpretChoices) -> str:
        return "letters" if self.labels == "auto" else self.labels

    @property
    def current_mode(self) -> str | None:
        """How answers are constrained now, for the debug record (None before a probe, or not a model)."""
        return None

    # ---- shared

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
                value = self._server_context_limit()
            except Exception:
                return DEFAULT_CONTEXT_LIMIT        # ask again next call
            self._context_limit = value or DEFAULT_CONTEXT_LIMIT
        return self._context_limit

    def _counter(self) -> Callable[[str, str], int] | None:
        if type(self)._count_tokens is ModelBackend._count_tokens:
            return None
        return self._count_tokens

    def fit(self, text: str, choices: InterpretChoices, context: InterpretContext, sheet: AnswerSheet) -> PromptFit:
        addressee = None
        if context.addressee is not None:
            addressee = next((p.name for p in context.people if p.id == context.addressee), context.addressee)

        def render(with_examples: bool) -> tuple[str, str]:
            return self.instructions, self.templates.prompt(
                text, choices, context, sheet.answers, with_examples=with_examples, addressee=addressee,
                text_limit=self.text_limit)

        return fit_prompt(render, self._counter(), self.context_limit(), self.reserve)

    def interpret(self, text: str, choices: InterpretChoices, context: InterpretContext) -> Interpretation:
        start = time.perf_counter()
        result = Interpretation(backend=self.name)
        try:
            if not choices.options:
                result.detail = "no options left to choose from"
                return result
            sheet = AnswerSheet.make(choices, self._label_scheme(choices))
            fit = self.fit(text, choices, context, sheet)
            result.examples_dropped = fit.examples_dropped
            result.prompt_tokens = fit.tokens
            if not fit.fits:
                raise BackendError(ErrorKind.CONTEXT_OVERFLOW,
                                   f"prompt needs {fit.tokens} tokens ({fit.counted_by}); "
                                   f"limit {self.context_limit()} less {self.reserve} for the answer")
            answer, scores = self._complete(fit, sheet)
            result.answer = answer
            result.scores = scores
            if answer == NONE_ANSWER:
                result.input = NONE
            else:
                token = sheet.token_for(answer)
                if token is None:
                    raise BackendError(ErrorKind.INVALID_ANSWER, f"answer {answer!r} is not one of {sheet.allowed}")
                result.token = token
                result.input = choices.input_for(token)
        except BackendError as exc:
            result.input, result.token = NONE, None
            result.error, result.detail = exc.kind, exc.message
        except Exception as exc:      # never into the game
            log.exception("%s backend failed", self.name)
            result.input, result.token = NONE, None
            result.error, result.detail = ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}"
        finally:
            result.elapsed_ms = elapsed_ms(start)
            result.mode = self.current_mode
        return result


def parse_chat_completion(data: Any, sheet: AnswerSheet,
                          mode: ChoiceMode = ChoiceMode.VLLM) -> tuple[str, dict[str, float]]:
    """Read a chat-completions response (bytes, str or dict): the answer label and per-option
    probabilities.  Raises `BackendError`."""
    if isinstance(data, (bytes, bytearray, str)):
        data = read_json(data)
    choice = read_choice(data, sheet.allowed, mode)
    return choice.label, sheet.by_token(choice.probabilities)


def chat_body(system: str, user: str, sheet: AnswerSheet, *, model: str | None = None, max_tokens: int = 16,
              top_logprobs: int = 20, mode: ChoiceMode = ChoiceMode.VLLM) -> dict[str, Any]:
    """The chat-completions body that asks for one of the sheet's answers (vLLM's structured outputs
    unless another mode is given)."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return choice_body(messages, sheet.allowed, mode, model=model, max_tokens=max_tokens, top_logprobs=top_logprobs)
