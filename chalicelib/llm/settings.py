"""The one switch that points every model use at one OpenAI-compatible server.

``make run MODEL_URL=http://127.0.0.1:11434/v1 MODEL=qwen2.5:7b`` sets the first two:

=======================  ==================================================================
``BUTAI_MODEL_URL``      base URL of an OpenAI-compatible server; with it, the classifier and
                         free conversation both use that server unless ``BUTAI_CLASSIFIER`` /
                         ``BUTAI_GENERATOR`` name something else
``BUTAI_MODEL``          model name (default: the server's first model)
``BUTAI_MODEL_API_KEY``  bearer token, for servers that want one (OpenAI)
``BUTAI_MODEL_MODE``     ``probe`` (default) | ``vllm`` | ``json_schema`` | ``json_object``:
                         how constrained choice is asked for (`chalicelib.llm.choice`)
``BUTAI_MODEL_RETRIES``  extra tries after a transient failure (unreachable, 5xx); default 0
=======================  ==================================================================

The per-use names (``BUTAI_OPENAI_BASE_URL``, ``BUTAI_GENERATOR_BASE_URL``, …) still win where set.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from chalicelib import env

from .choice import MODE_SETTINGS, PROBE


@dataclass(frozen=True)
class ModelSwitch:
    url: str | None = None
    model: str | None = None
    api_key: str | None = None
    mode: str = PROBE
    retries: int = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ModelSwitch:
        source = os.environ if environ is None else environ
        mode = (source.get(env.MODEL_MODE) or PROBE).strip().lower()
        if mode not in MODE_SETTINGS:
            raise ValueError(f"BUTAI_MODEL_MODE={mode!r}; expected one of {', '.join(MODE_SETTINGS)}")
        return cls(url=(source.get(env.MODEL_URL) or "").strip() or None,
                   model=(source.get(env.MODEL) or "").strip() or None,
                   api_key=source.get(env.MODEL_API_KEY) or None,
                   mode=mode,
                   retries=int(source.get(env.MODEL_RETRIES) or 0))
