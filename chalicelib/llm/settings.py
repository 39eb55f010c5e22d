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

Every model setting — the switch, the classifier's, free conversation's and the expression judge's — is read
here, once, into one ``ModelSettings`` that ``config.Settings`` carries; the builders
(``interpret.backends.build_backend``, ``talk.build_generator``, ``expression.build_judge``) take its parts.
Reading is plain string work with no model library imported, so a new process pays nothing for it.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from chalicelib import env

from .choice import MODE_SETTINGS, PROBE, ChoiceMode

DEFAULT_CLASSIFIER = "lexical"
DEFAULT_JUDGE = "lexicon"
DEFAULT_JUDGE_TIMEOUT = 2.0
DEFAULT_GENERATOR_TIMEOUT = 8.0


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


@dataclass(frozen=True)
class ModelUse:
    """One use of a model: which builder (``name``) and its keyword arguments (read-only)."""
    name: str | None
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    def kwargs(self) -> dict[str, Any]:
        return dict(self.options)


def classifier_use(source: Mapping[str, str] | None = None, name: str | None = None,
                   switch: ModelSwitch | None = None) -> ModelUse:
    """``BUTAI_CLASSIFIER`` and its backend's settings (see ``chalicelib/interpret/backends``)."""
    source = os.environ if source is None else source
    switch = switch or ModelSwitch.from_env(source)
    name = (name or source.get(env.CLASSIFIER) or ("openai" if switch.url else DEFAULT_CLASSIFIER)).strip().lower()
    options: dict[str, Any] = {}
    if source.get(env.CLASSIFIER_TIMEOUT):
        options["timeout"] = float(source[env.CLASSIFIER_TIMEOUT])
    if source.get(env.CONTEXT_LIMIT):
        options["context_limit"] = int(source[env.CONTEXT_LIMIT])
    if source.get(env.CLASSIFIER_LABELS):
        options["labels"] = source[env.CLASSIFIER_LABELS]
    model = name.split("+", 1)[1] if name.startswith("lexical+") else name
    if model in ("sagemaker", "openai"):
        options["retries"] = switch.retries
        if source.get(env.MODEL_MODE):          # sagemaker's own default is vllm, the container's mode
            options["mode"] = switch.mode
    if model == "sagemaker":
        options["endpoint"] = source.get(env.SAGEMAKER_ENDPOINT, "")
        options["model"] = source.get(env.SAGEMAKER_MODEL) or None
    elif model == "openai":
        options["base_url"] = source.get(env.OPENAI_BASE_URL) or switch.url or ""
        options["model"] = source.get(env.OPENAI_MODEL) or switch.model
        options["api_key"] = source.get(env.OPENAI_API_KEY) or switch.api_key
    elif model == "transformers":
        options["model_path"] = source.get(env.TRANSFORMERS_MODEL, "")
        options["device"] = source.get(env.TRANSFORMERS_DEVICE) or "auto"
    return ModelUse(name, options)


def generator_use(source: Mapping[str, str] | None = None, switch: ModelSwitch | None = None) -> ModelUse:
    """``BUTAI_GENERATOR=sagemaker|openai`` picks the free-conversation model; unset: the one switch's server
    (``BUTAI_MODEL_URL``) when set, else none (``name`` None: the characters' fallback lines)."""
    source = os.environ if source is None else source
    switch = switch or ModelSwitch.from_env(source)
    kind = (source.get(env.GENERATOR) or ("openai" if switch.url else "")).strip().lower()
    timeout = float(source.get(env.GENERATOR_TIMEOUT) or DEFAULT_GENERATOR_TIMEOUT)
    if kind == "openai":
        base_url = source.get(env.GENERATOR_BASE_URL) or source.get(env.OPENAI_BASE_URL) or switch.url or ""
        if not base_url:
            raise ValueError("BUTAI_GENERATOR=openai needs BUTAI_MODEL_URL (or BUTAI_GENERATOR_BASE_URL)")
        return ModelUse("openai", {
            "base_url": base_url,
            "model": source.get(env.GENERATOR_MODEL) or source.get(env.OPENAI_MODEL) or switch.model,
            "api_key": source.get(env.GENERATOR_API_KEY) or source.get(env.OPENAI_API_KEY) or switch.api_key,
            "timeout": timeout, "mode": switch.mode, "retries": switch.retries})
    if kind == "sagemaker":
        endpoint = source.get(env.GENERATOR_ENDPOINT) or source.get(env.SAGEMAKER_ENDPOINT) or ""
        if not endpoint:
            raise ValueError("BUTAI_GENERATOR=sagemaker needs BUTAI_GENERATOR_ENDPOINT (or BUTAI_SAGEMAKER_ENDPOINT)")
        return ModelUse("sagemaker", {
            "endpoint": endpoint, "model": source.get(env.GENERATOR_MODEL), "timeout": timeout,
            "mode": switch.mode if source.get(env.MODEL_MODE) else ChoiceMode.VLLM.value,
            "retries": switch.retries})
    if kind:
        raise ValueError(f"BUTAI_GENERATOR={kind!r}; expected openai or sagemaker (or unset)")
    return ModelUse(None)


def judge_use(source: Mapping[str, str] | None = None, name: str | None = None,
              switch: ModelSwitch | None = None) -> ModelUse:
    """``BUTAI_EXPRESSION_JUDGE``: the embedded lexicon, or a classifier backend built from the classifier's
    settings with its own timeout (``BUTAI_EXPRESSION_TIMEOUT``)."""
    source = os.environ if source is None else source
    name = (name or source.get(env.EXPRESSION_JUDGE) or DEFAULT_JUDGE).strip().lower()
    if name == DEFAULT_JUDGE:
        return ModelUse(name)
    options = classifier_use(source, name, switch).kwargs()
    options["timeout"] = float(source.get(env.EXPRESSION_TIMEOUT) or DEFAULT_JUDGE_TIMEOUT)
    return ModelUse(name, options)


@dataclass(frozen=True)
class ModelSettings:
    """Every model use's configuration, read from the environment once."""
    switch: ModelSwitch = field(default_factory=ModelSwitch)
    classifier: ModelUse = field(default_factory=lambda: ModelUse(DEFAULT_CLASSIFIER))
    generator: ModelUse = field(default_factory=lambda: ModelUse(None))
    judge: ModelUse = field(default_factory=lambda: ModelUse(DEFAULT_JUDGE))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ModelSettings:
        source = os.environ if environ is None else environ
        switch = ModelSwitch.from_env(source)
        return cls(switch=switch, classifier=classifier_use(source, switch=switch),
                   generator=generator_use(source, switch), judge=judge_use(source, switch=switch))
