"""`butai doctor`: which model backends are configured, and whether each one really answers.

One test call per use (the classifier's constrained choice, free conversation's plain chat), with a
message a stage author can act on for the three common failures: the server is unreachable, the model
is not on it, the server ignores the constraint.  The start banner prints the short form
(`banner_lines`: configuration and whether the server answers ``GET /models``, no model call).

The constraint check asks for something the labels cannot say (a greeting) while only ``A``, ``B`` or
``none`` are allowed: a server that enforces the constraint still answers one of them, one that
ignores it writes the greeting.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib import env as names
from chalicelib.llm.choice import Chooser
from chalicelib.llm.errors import ErrorKind, ModelCallError
from chalicelib.llm.settings import ModelSwitch
from chalicelib.llm.transport import OpenAITransport

PROBE_LABELS = ("A", "B", "none")
PROBE_MESSAGES = [
    {"role": "system", "content": "Answer the user's request in your own words."},
    {"role": "user", "content": "Write one friendly sentence greeting a guest in English."},
]
TALK_MESSAGES = [{"role": "user", "content": "「こんばんは」と一言だけ返してください。"}]
SERVER_HINT = "start it (ollama serve · llama-server -m FILE · lms server start · vllm serve MODEL) or fix MODEL_URL"


@dataclass
class Check:
    use: str                   # "classifier" | "free conversation"
    backend: str               # lexical, openai, sagemaker, transformers, fallback lines
    where: str = ""
    ok: bool = True
    message: str = ""
    mode: str | None = None
    kind: str | None = None    # ErrorKind when it failed

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        where = f" at {self.where}" if self.where else ""
        mode = f" [{self.mode}]" if self.mode else ""
        return f"{mark} {self.use}: {self.backend}{where}{mode} — {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"use": self.use, "backend": self.backend, "where": self.where, "ok": self.ok,
                "message": self.message, "mode": self.mode, "kind": self.kind}


def _accepts(ids: list[str], model: str) -> bool:
    # Ollama lists "qwen2.5:latest" for "qwen2.5"
    return model in ids or f"{model}:latest" in ids


def explain(exc: ModelCallError, where: str, model: str | None, mode: str | None = None) -> str:
    """One line saying what went wrong and what to do about it."""
    if exc.kind == ErrorKind.UNREACHABLE:
        return f"cannot reach the server ({exc.message}); {SERVER_HINT}"
    if exc.kind == ErrorKind.MODEL_MISSING:
        return (f"the server has no model {model!r} ({exc.message}); pull or load it "
                f"(ollama pull {model or 'NAME'}) or set MODEL to one the server lists")
    if exc.kind == ErrorKind.TIMEOUT:
        return f"no answer in time ({exc.message}); the model may still be loading — try again or raise the timeout"
    if exc.kind == ErrorKind.INVALID_ANSWER and mode is not None:
        return (f"the server ignores constraints in mode {mode}: {exc.message}; use a server that honours "
                f"response_format json_schema (llama.cpp, Ollama, LM Studio, vLLM, OpenAI) or set "
                f"BUTAI_MODEL_MODE to the mode it supports")
    return f"{exc.kind}: {exc.message}"


def _server_check(use: str, backend: str, transport: OpenAITransport, model: str | None) -> Check | None:
    """The server part: reachable, and holding the model.  None when both hold."""
    try:
        ids = transport.model_ids()
    except ModelCallError as exc:
        return Check(use, backend, transport.describe(), False, explain(exc, transport.describe(), model),
                     kind=exc.kind)
    if model and not _accepts(ids, model):
        listed = ", ".join(ids[:8]) or "none"
        return Check(use, backend, transport.describe(), False,
                     f"the server has no model {model!r} (it lists: {listed}); pull or load it "
                     f"(ollama pull {model}) or set MODEL to one of those", kind=ErrorKind.MODEL_MISSING)
    if not ids:
        return Check(use, backend, transport.describe(), False, "the server lists no model; load one",
                     kind=ErrorKind.MODEL_MISSING)
    return None


def check_classifier(env: Mapping[str, str]) -> Check:
    from chalicelib.interpret.backends import backend_from_env
    try:
        backend = backend_from_env(env)
    except (ValueError, TypeError) as exc:
        return Check("classifier", env.get(names.CLASSIFIER) or "?", ok=False, message=str(exc),
                     kind=ErrorKind.BAD_REQUEST)
    name = backend.name
    if name == "lexical":
        return Check("classifier", name, message="word matching, no model (set MODEL_URL for a model)")
    if name == "transformers":
        try:
            backend.load()                                       # type: ignore[attr-defined]
        except ModelCallError as exc:
            return Check("classifier", name, backend.model_path, False, exc.message, kind=exc.kind)  # type: ignore[attr-defined]
        return Check("classifier", name, backend.model_path, message="model loaded in process")  # type: ignore[attr-defined]
    transport = backend.transport                                # type: ignore[attr-defined]
    chooser: Chooser = backend.chooser                           # type: ignore[attr-defined]
    model = backend.model                                        # type: ignore[attr-defined]
    if isinstance(transport, OpenAITransport):
        failed = _server_check("classifier", name, transport, model)
        if failed is not None:
            return failed
        model = model or transport.default_model()
    mode = chooser.settle().value
    try:
        choice = chooser.choose(PROBE_MESSAGES, list(PROBE_LABELS), model=model)
    except ModelCallError as exc:
        mode = chooser.current_mode.value if chooser.current_mode else mode
        return Check("classifier", name, transport.describe(), False, explain(exc, transport.describe(), model, mode),
                     mode=mode, kind=exc.kind)
    odds = "per-option probabilities read from logprobs" if choice.probabilities else \
        "no logprobs from this server: answers without probabilities"
    return Check("classifier", name, transport.describe(), True,
                 f"model {model or '(endpoint default)'} answered {choice.label!r} within the constraint; {odds}",
                 mode=choice.mode.value)


def check_talk(env: Mapping[str, str]) -> Check:
    from chalicelib.talk import generator_from_env
    try:
        generator = generator_from_env(env)
    except (ValueError, KeyError) as exc:
        return Check("free conversation", env.get(names.GENERATOR) or "?", ok=False, message=str(exc),
                     kind=ErrorKind.BAD_REQUEST)
    if generator is None:
        return Check("free conversation", "fallback lines",
                     message="no model: characters answer with their fallback lines (set MODEL_URL for a model)")
    transport = generator.transport                              # type: ignore[attr-defined]
    model = generator.model                                      # type: ignore[attr-defined]
    if isinstance(transport, OpenAITransport):
        failed = _server_check("free conversation", generator.name, transport, model)
        if failed is not None:
            return failed
    try:
        text = generator.complete(TALK_MESSAGES, max_tokens=32, temperature=0.0)
    except ModelCallError as exc:
        return Check("free conversation", generator.name, transport.describe(), False,
                     explain(exc, transport.describe(), model), mode=generator.current_mode, kind=exc.kind)  # type: ignore[attr-defined]
    preview = " ".join(text.split())[:40]
    return Check("free conversation", generator.name, transport.describe(), True,
                 f"model {generator.model_name() or '(endpoint default)'} answered {preview!r}",  # type: ignore[attr-defined]
                 mode=generator.current_mode)                    # type: ignore[attr-defined]


def diagnose(environ: Mapping[str, str] | None = None) -> list[Check]:
    env = dict(os.environ if environ is None else environ)
    return [check_classifier(env), check_talk(env)]


def banner_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """What the start banner says about models: the backends, and whether their server answers at all."""
    env = dict(os.environ if environ is None else environ)
    try:
        switch = ModelSwitch.from_env(env)
    except ValueError as exc:
        return [f"models: {exc}"]
    from chalicelib.interpret.backends import settings_from_env
    try:
        classifier, settings = settings_from_env(env)
    except ValueError as exc:
        return [f"models: {exc}"]
    talk = (env.get(names.GENERATOR) or ("openai" if switch.url else "")).lower() or "fallback lines"
    line = f"models: classifier {classifier}, free conversation {talk}"
    url = settings.get("base_url") if classifier == "openai" else (switch.url if talk == "openai" else None)
    if url:
        try:
            ids = OpenAITransport(url, api_key=settings.get("api_key") or switch.api_key, timeout=2.0).model_ids()
            line += f" — {url} answers ({', '.join(ids[:3]) or 'no model listed'})"
        except (ModelCallError, ValueError) as exc:
            line += f" — {url}: {exc}"
    return [line, "  `butai doctor` makes one test call of each"]
