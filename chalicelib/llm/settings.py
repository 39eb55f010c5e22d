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
(``interpret.backends.build_backend``, ``talk.build_generator``, ``expression.build_judge``, all called from
``chalicelib.context``) take its parts.  A process that overrides a setting (``butai doctor --base-url``,
``butai eval-interpret --backend``) says so explicitly with ``ModelSettings.with_(model_url=…)``: the keyword
is the variable's name without ``BUTAI_``, lower-cased, and the uses are derived again from the result.
Reading is plain string work with no model library imported, so a new process pays nothing for it.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from chalicelib import env

from .breaker import DEFAULT_FAILURES, DEFAULT_OPEN_SECONDS
from .choice import MODE_SETTINGS, PROBE, ChoiceMode
from .transport import DEFAULT_TIMEOUT

DEFAULT_CLASSIFIER = "lexical"
# A SageMaker endpoint is the deployed classifier, called inside a player's request: a turn waits at most
# this long for it before the lexical reading (or なし) answers.  A warm endpoint answers in a fraction of it;
# a cold or overloaded one would otherwise hold the request, and its Lambda execution, for the default 10 s.
# Servers on the operator's own machine (openai, often a CPU model) keep the general default.
DEFAULT_SAGEMAKER_TIMEOUT = 1.5
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
    def read(cls, source: Mapping[str, str]) -> ModelSwitch:
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


def classifier_use(source: Mapping[str, str], switch: ModelSwitch, name: str | None = None) -> ModelUse:
    """``BUTAI_CLASSIFIER`` and its backend's settings (see ``chalicelib/interpret/backends``)."""
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
        options.setdefault("timeout", DEFAULT_SAGEMAKER_TIMEOUT if model == "sagemaker" else DEFAULT_TIMEOUT)
        options["breaker_failures"] = int(source.get(env.CLASSIFIER_BREAKER_FAILURES) or DEFAULT_FAILURES)
        options["breaker_seconds"] = float(source.get(env.CLASSIFIER_BREAKER_SECONDS) or DEFAULT_OPEN_SECONDS)
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


def generator_use(source: Mapping[str, str], switch: ModelSwitch) -> ModelUse:
    """``BUTAI_GENERATOR=sagemaker|openai`` picks the free-conversation model; unset: the one switch's server
    (``BUTAI_MODEL_URL``) when set, else none (``name`` None: the characters' fallback lines)."""
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


def judge_use(source: Mapping[str, str], switch: ModelSwitch) -> ModelUse:
    """``BUTAI_EXPRESSION_JUDGE``: the embedded lexicon, or a classifier backend built from the classifier's
    settings with its own timeout (``BUTAI_EXPRESSION_TIMEOUT``)."""
    name = (source.get(env.EXPRESSION_JUDGE) or DEFAULT_JUDGE).strip().lower()
    if name == DEFAULT_JUDGE:
        return ModelUse(name)
    options = classifier_use(source, switch, name).kwargs()
    options["timeout"] = float(source.get(env.EXPRESSION_TIMEOUT) or DEFAULT_JUDGE_TIMEOUT)
    return ModelUse(name, options)


# Every variable a model use reads; ``ModelSettings`` keeps the ones that were set.
VARIABLES = (env.MODEL_URL, env.MODEL, env.MODEL_API_KEY, env.MODEL_MODE, env.MODEL_RETRIES,
             env.CLASSIFIER, env.CLASSIFIER_TIMEOUT, env.CLASSIFIER_LABELS, env.CONTEXT_LIMIT,
             env.CLASSIFIER_BREAKER_FAILURES, env.CLASSIFIER_BREAKER_SECONDS,
             env.SAGEMAKER_ENDPOINT, env.SAGEMAKER_MODEL, env.OPENAI_BASE_URL, env.OPENAI_MODEL, env.OPENAI_API_KEY,
             env.TRANSFORMERS_MODEL, env.TRANSFORMERS_DEVICE,
             env.GENERATOR, env.GENERATOR_BASE_URL, env.GENERATOR_MODEL, env.GENERATOR_API_KEY,
             env.GENERATOR_ENDPOINT, env.GENERATOR_TIMEOUT, env.EXPRESSION_JUDGE, env.EXPRESSION_TIMEOUT)
PREFIX = "BUTAI_"


def keyword(variable: str) -> str:
    """``BUTAI_MODEL_URL`` -> ``model_url``: the name an override uses (`ModelSettings.with_`)."""
    return variable[len(PREFIX):].lower()


_BY_KEYWORD = {keyword(v): v for v in VARIABLES}


@dataclass(frozen=True)
class ModelSettings:
    """Every model use's configuration, read once: from the environment (`from_env`), with explicit
    overrides on top (`with_`)."""
    switch: ModelSwitch = field(default_factory=ModelSwitch)
    classifier: ModelUse = field(default_factory=lambda: ModelUse(DEFAULT_CLASSIFIER))
    generator: ModelUse = field(default_factory=lambda: ModelUse(None))
    judge: ModelUse = field(default_factory=lambda: ModelUse(DEFAULT_JUDGE))
    # The model variables that were set, by name (read-only): what `with_` derives the uses from again.
    variables: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", MappingProxyType(dict(self.variables)))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ModelSettings:
        source = os.environ if environ is None else environ
        return cls.read({name: source[name] for name in VARIABLES if source.get(name)})

    @classmethod
    def read(cls, variables: Mapping[str, str]) -> ModelSettings:
        """The uses that these variables ask for; a bad value raises `ValueError` naming the variable."""
        switch = ModelSwitch.read(variables)
        return cls(switch=switch, classifier=classifier_use(variables, switch),
                   generator=generator_use(variables, switch), judge=judge_use(variables, switch),
                   variables=variables)

    def with_(self, **changes: str | float | int | None) -> ModelSettings:
        """These settings with some variables set (or, given None, unset):
        ``with_(model_url="http://127.0.0.1:8080/v1", classifier="openai")``."""
        unknown = sorted(set(changes) - set(_BY_KEYWORD))
        if unknown:
            raise TypeError(f"unknown model setting(s) {', '.join(unknown)}; expected some of "
                            f"{', '.join(sorted(_BY_KEYWORD))}")
        variables = dict(self.variables)
        for key, value in changes.items():
            if value is None or value == "":
                variables.pop(_BY_KEYWORD[key], None)
            else:
                variables[_BY_KEYWORD[key]] = str(value)
        return self.read(variables)
