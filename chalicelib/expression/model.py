"""Model judges: a constrained-choice model of the model-call layer choosing a face.

The model is reached exactly as the input classifier reaches it — `chalicelib.llm`'s `ChoiceModel`: the
same transport, the same constrained answer (vLLM ``structured_outputs.choice``, a JSON schema, or scoring
every allowed answer in process), the same context budget — only the prompt and the labels differ: the
labels are the character's expression keys (``none`` counts as ``neutral``).

When the model fails (timeout, refusal, an answer off the list …) the embedded judge answers instead and
the judgment carries the model's error.
"""
from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path

import jinja2

from ..faces import NEUTRAL
from ..llm.choice import ChoiceModel
from ..llm.errors import ErrorKind, ModelCallError
from ..llm.prompt import ANSWER_RESERVE, DEFAULT_CONTEXT_LIMIT, fit_prompt, neutralise
from .judgment import ExpressionChoice, Judgment, family
from .lexicon import LexiconJudge

NONE_LABEL = "none"          # the model's way of saying no feeling in particular: neutral
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
    system = env.get_template("instructions.j2").render(neutral=NEUTRAL).strip()
    options = [{"key": key, "meaning": "平静（特別な気持ちのない説明や質問）" if key == NEUTRAL
                else MEANINGS.get(family(key), "")} for key in choice.keys]
    user = env.get_template("prompt.j2").render(options=options, character=choice.character_name,
                                                text=neutralise(text, TEXT_LIMIT)).strip()
    return system, user


class ModelJudge:
    """A face chosen by a `ChoiceModel` (``openai``, ``sagemaker``, ``transformers``)."""

    def __init__(self, chooser: ChoiceModel, fallback: LexiconJudge | None = None, *,
                 context_limit: int | None = None, reserve: int = ANSWER_RESERVE) -> None:
        self.chooser = chooser
        self.name = chooser.name
        self.fallback = fallback or LexiconJudge()
        self.configured_context_limit = context_limit
        self.reserve = reserve

    def describe(self) -> str:
        return f"{self.name} at {self.chooser.describe()}, falling back to {self.fallback.name}"

    def context_limit(self) -> int:
        if self.configured_context_limit:
            return self.configured_context_limit
        try:
            return self.chooser.context_limit() or DEFAULT_CONTEXT_LIMIT
        except ModelCallError:
            return DEFAULT_CONTEXT_LIMIT

    def _count(self, system: str, user: str) -> int:
        return self.chooser.count_tokens([{"role": "system", "content": system}, {"role": "user", "content": user}])

    def judge(self, text: str, choice: ExpressionChoice) -> Judgment:
        start = time.perf_counter()
        chooser = self.chooser
        labels = [*choice.keys, NONE_LABEL]
        try:
            text = chooser.defuse(text)         # tokenizer markers typed into a line stay text
            fit = fit_prompt(lambda _examples: render(text, choice), self._count, self.context_limit(),
                             self.reserve)
            if not fit.fits:
                raise ModelCallError(ErrorKind.CONTEXT_OVERFLOW, f"prompt needs {fit.tokens} tokens")
            answer = chooser.choose([{"role": "system", "content": fit.system},
                                     {"role": "user", "content": fit.user}], labels)
            folded = {key: answer.probabilities.get(key, 0.0) for key in choice.keys}
            folded[NEUTRAL] += answer.probabilities.get(NONE_LABEL, 0.0)     # "none" is the model's neutral
            result = Judgment(expression=NEUTRAL if answer.label == NONE_LABEL else answer.label, scores=folded,
                              judge=self.name)
        except ModelCallError as exc:
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
