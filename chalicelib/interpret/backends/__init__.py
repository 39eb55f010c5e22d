"""Classifier backends and the small configuration that builds them.

``build_backend(name, **settings)`` builds one by name.  The process's settings
(`chalicelib.config.Settings`, read once from the ``BUTAI_*`` variables below)
say which, and `chalicelib.context.build_classifier` builds it from them:

================================  ====================================================
``BUTAI_CLASSIFIER``              ``lexical`` | ``sagemaker`` | ``openai`` | ``transformers``, or
                                  ``lexical+<model>``: the model only when lexical is unsure
                                  (default: ``openai`` when ``BUTAI_MODEL_URL`` is set, else ``lexical``)
``BUTAI_CLASSIFIER_TIMEOUT``      seconds per call (default 1.5 for sagemaker, 10 for the others)
``BUTAI_CLASSIFIER_BREAKER_FAILURES``  server failures in a row that open its circuit breaker (default 3;
                                  0: none); while open the model is not asked (``llm/breaker.py``)
``BUTAI_CLASSIFIER_BREAKER_SECONDS``   how long it stays open before one probe call (default 30)
``BUTAI_CONTEXT_LIMIT``           the model's context in tokens (default: from the server or model, else 8192)
``BUTAI_CLASSIFIER_LABELS``       ``letters`` | ``tokens`` (| ``auto`` for transformers)
``BUTAI_SAGEMAKER_ENDPOINT``      endpoint name (sagemaker)
``BUTAI_SAGEMAKER_MODEL``         optional ``model`` field for the container
``BUTAI_OPENAI_BASE_URL``         e.g. ``http://127.0.0.1:8000/v1`` (openai; default ``BUTAI_MODEL_URL``)
``BUTAI_OPENAI_MODEL``            model name (default ``BUTAI_MODEL``, else the server's first model)
``BUTAI_OPENAI_API_KEY``          bearer token, if the server wants one (default ``BUTAI_MODEL_API_KEY``)
``BUTAI_MODEL_MODE``              constrained-choice mode (``probe`` | ``vllm`` | ``json_schema`` | ``json_object``)
``BUTAI_MODEL_RETRIES``           extra tries after a transient failure (default 0)
``BUTAI_TRANSFORMERS_MODEL``      local model directory or ``.gguf`` file (transformers)
``BUTAI_TRANSFORMERS_DEVICE``     ``auto`` | ``cpu`` | ``cuda``
================================  ====================================================
"""
from __future__ import annotations

from typing import Any

from ...llm.settings import DEFAULT_CLASSIFIER
from .base import AnswerSheet, Backend, ModelBackend
from .lexical import LexicalBackend

BACKENDS = ("lexical", "sagemaker", "openai", "transformers",
            "lexical+sagemaker", "lexical+openai", "lexical+transformers")
DEFAULT_BACKEND = DEFAULT_CLASSIFIER


def build_backend(name: str = DEFAULT_BACKEND, **settings: Any) -> Backend:
    """Build a backend by name.  Settings are the backend's keyword arguments
    (``timeout``, ``context_limit``, ``labels``, and per backend: ``endpoint``,
    ``client``, ``mode``, ``retries``; ``base_url``, ``model``, ``api_key``, ``mode``, ``retries``;
    ``model_path``, ``device``)."""
    name = (name or DEFAULT_BACKEND).strip().lower()
    settings = {k: v for k, v in settings.items() if v is not None}
    if name.startswith("lexical+"):
        # the embedded classifier, and the model only in its unsure band (backends/cascade.py)
        from .cascade import CascadeBackend
        return CascadeBackend(build_backend(name.split("+", 1)[1], **settings))
    if name == "lexical":
        settings.pop("timeout", None)
        settings.pop("context_limit", None)
        settings.pop("labels", None)
        return LexicalBackend(**settings)
    if name == "sagemaker":
        from .sagemaker import SageMakerBackend
        return SageMakerBackend(**settings)
    if name == "openai":
        from .openai_server import OpenAIBackend
        return OpenAIBackend(**settings)
    if name == "transformers":
        from .transformers_local import TransformersBackend
        return TransformersBackend(**settings)
    raise ValueError(f"unknown classifier backend {name!r}; expected one of {', '.join(BACKENDS)}")


__all__ = ["AnswerSheet", "BACKENDS", "Backend", "DEFAULT_BACKEND", "LexicalBackend", "ModelBackend",
           "build_backend"]
