"""Which expression judge the stage uses, configured like the classifier.

``BUTAI_EXPRESSION_JUDGE``: ``lexicon`` (the embedded default) or one of the
model-call layer's models, ``openai`` | ``sagemaker`` | ``transformers``,
built from the same ``BUTAI_*`` settings as the classifier (base URL, model,
endpoint …; read once in ``llm.settings``).
``BUTAI_EXPRESSION_TIMEOUT`` overrides the call timeout for the judge alone:
a speak waits for it, so keep it short (default 2 s); a model that does not
answer in time leaves the line to the embedded judge.
"""
from __future__ import annotations

from typing import Any

from ..llm.settings import DEFAULT_JUDGE, DEFAULT_JUDGE_TIMEOUT
from .judgment import ExpressionJudge
from .lexicon import LexiconJudge

JUDGES = ("lexicon", "openai", "sagemaker", "transformers")
# What a model judge takes from the classifier's options that is not the model's own.
_JUDGE_OPTIONS = ("context_limit",)
_CLASSIFIER_ONLY = ("labels",)


def build_judge(name: str | None = DEFAULT_JUDGE, **options: Any) -> ExpressionJudge:
    name = (name or DEFAULT_JUDGE).strip().lower()
    if name == "lexicon":
        return LexiconJudge()
    if name not in JUDGES:
        raise ValueError(f"unknown expression judge {name!r}; expected one of {', '.join(JUDGES)}")
    from ..llm.build import build_chooser
    from .model import ModelJudge
    options = {k: v for k, v in options.items() if v is not None and k not in _CLASSIFIER_ONLY}
    options.setdefault("timeout", DEFAULT_JUDGE_TIMEOUT)
    judge_options = {k: options.pop(k) for k in _JUDGE_OPTIONS if k in options}
    return ModelJudge(build_chooser(name, **options), **judge_options)


def describe(judge: ExpressionJudge) -> str:
    """One line for the start banner."""
    if isinstance(judge, LexiconJudge):
        return "lexicon (embedded, no model)"
    return judge.describe() if hasattr(judge, "describe") else judge.name
