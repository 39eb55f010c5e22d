"""Model judges: the classifier's model backends choosing a face.

The backend is used exactly as the input classifier uses it — the same
transport, the same constrained answer (vLLM ``structured_outputs.choice``,
or scoring every allowed answer in process), the same context budget — only
the prompt and the answer sheet differ: the answers are the character's
expression keys (``none`` counts as ``neutral``).  This module is the whole
glue: it calls the backend's one completion hook, so it follows the backend
wherever the transports live.

When the model fails (timeout, refusal, an answer off the list …) the
embedded judge answers instead and the judgment carries the model's error.
"""
from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from ..interpret.backends.base import AnswerSheet
from ..interpret.choices import NONE_ANSWER, BackendError, ErrorKind
from ..interpret.prompts import fit_prompt, neutralise
from ..stage.face_images import FALLBACK
from .choice import ExpressionChoice, Judgment, family
from .lexicon import LexiconJudge

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEXT_LIMIT = 400
# What each family of feeling means, told to the model next to the key.
MEANINGS = {
    None: "",
    "smile": "笑顔（嬉しい、楽しい、感謝、歓迎）",
    "troubled": "困り顔（謝罪、悲しみ、心配、困惑）",
    "surprised": "驚き（意外、信じられない）",
    "embarrassed": "照れ（恥ずかしい、褒められた）",
    "determined": "決意（やる気、約束、覚悟）",
    "angry": "怒り（抗議、叱る、許さない）",
}


@lru_cache(maxsize=1)
def _templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False, trim_blocks=True,
                              lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def render(text: str, choice: ExpressionChoice) -> tuple[str, str]:
    env = _templates()
    system = env.get_template("instructions.j2").render(neutral=FALLBACK).strip()
    options = [{"key": key, "meaning": "平静（特別な気持ちのない説明や質問）" if key == FALLBACK
                else MEANINGS.get(family(key), "")} for key in choice.keys]
    user = env.get_template("prompt.j2").render(options=options, character=choice.character_name,
                                                text=neutralise(text, TEXT_LIMIT)).strip()
    return system, user


class ModelJudge:
    """Wraps a classifier model backend (``openai``, ``sagemaker``, ``transformers``)."""

    def __init__(self, backend: Any, fallback: LexiconJudge | None = None) -> None:
        self.backend = backend
        self.name = getattr(backend, "name", "model")
        self.fallback = fallback or LexiconJudge()

    def judge(self, text: str, choice: ExpressionChoice) -> Judgment:
        start = time.perf_counter()
        backend = self.backend
        sheet = AnswerSheet({key: key for key in choice.keys}, "tokens")
        try:
            if hasattr(backend, "defuse"):
                text = backend.defuse(text)        # tokenizer markers typed into a line stay text
            fit = fit_prompt(lambda _examples: render(text, choice), backend._counter(), backend.context_limit(),
                             backend.reserve)
            if not fit.fits:
                raise BackendError(ErrorKind.CONTEXT_OVERFLOW, f"prompt needs {fit.tokens} tokens")
            answer, scores = backend._complete(fit, sheet)
            if answer != NONE_ANSWER and answer not in choice.keys:
                raise BackendError(ErrorKind.INVALID_ANSWER, f"answer {answer!r} is not one of {sheet.allowed}")
            folded = {key: scores.get(key, 0.0) for key in choice.keys}
            folded[FALLBACK] += scores.get(NONE_ANSWER, 0.0)     # "none" is the model's neutral
            result = Judgment(expression=FALLBACK if answer == NONE_ANSWER else answer, scores=folded,
                              judge=self.name)
        except BackendError as exc:
            result = self._fallback(text, choice, exc.kind, exc.message)
        except Exception as exc:       # a line must always get a face
            result = self._fallback(text, choice, ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")
        result.elapsed_ms = (time.perf_counter() - start) * 1000.0
        return result

    def _fallback(self, text: str, choice: ExpressionChoice, kind: str, detail: str) -> Judgment:
        result = self.fallback.judge(text, choice)
        result.judge = f"{self.name}→{self.fallback.name}"
        result.error, result.detail = kind, detail[:300]
        return result
