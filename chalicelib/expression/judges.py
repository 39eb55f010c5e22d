"""Which expression judge the stage uses, configured like the classifier.

``BUTAI_EXPRESSION_JUDGE``: ``lexicon`` (the embedded default) or one of the
classifier's model backends, ``openai`` | ``sagemaker`` | ``transformers``,
built from the same ``BUTAI_*`` settings as the classifier (base URL, model,
endpoint, timeout …; see ``chalicelib/interpret/backends``).
``BUTAI_EXPRESSION_TIMEOUT`` overrides the call timeout for the judge alone:
a speak waits for it, so keep it short (default 2 s); a model that does not
answer in time leaves the line to the embedded judge.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..llm.settings import DEFAULT_JUDGE, DEFAULT_JUDGE_TIMEOUT, judge_use
from .choice import ExpressionJudge
from .lexicon import LexiconJudge

JUDGES = ("lexicon", "openai", "sagemaker", "transformers")
DEFAULT_MODEL_TIMEOUT = DEFAULT_JUDGE_TIMEOUT


def build_judge(name: str = DEFAULT_JUDGE, **settings: Any) -> ExpressionJudge:
    name = (name or DEFAULT_JUDGE).strip().lower()
    if name == "lexicon":
        return LexiconJudge()
    if name not in JUDGES:
        raise ValueError(f"unknown expression judge {name!r}; expected one of {', '.join(JUDGES)}")
    from ..interpret.backends import build_backend
    from .model import ModelJudge
    settings.setdefault("timeout", DEFAULT_MODEL_TIMEOUT)
    return ModelJudge(build_backend(name, **settings))


def judge_from_env(environ: Mapping[str, str] | None = None, name: str | None = None) -> ExpressionJudge:
    """The judge the environment asks for (``BUTAI_EXPRESSION_JUDGE``, read in ``llm.settings``)."""
    use = judge_use(environ, name)
    return build_judge(use.name, **use.kwargs())


def describe(judge: ExpressionJudge) -> str:
    """One line for the start banner."""
    if isinstance(judge, LexiconJudge):
        return "lexicon (embedded, no model)"
    backend = getattr(judge, "backend", None)
    where = getattr(backend, "base_url", None) or getattr(backend, "endpoint", None) or \
        getattr(backend, "model_path", None) or ""
    return f"{judge.name} {where}".strip() + ", falling back to lexicon"
