"""`butai doctor`: which model backends are configured, and whether each one really answers.

Both uses are built from the process's one `Settings` exactly as the services build them
(`chalicelib.context.build_models`), then each gets one test call (the classifier's constrained choice,
free conversation's plain chat), with a message a stage author can act on for the three common
failures: the server is unreachable, the model is not on it, the server ignores the constraint.  The
start banner prints the short form of what the local runtime built (`banner_lines`: the backends and
whether their server answers ``GET /models``, no model call).

The constraint check asks for something the labels cannot say (a greeting) while only ``A``, ``B`` or
``none`` are allowed: a server that enforces the constraint still answers one of them, one that
ignores it writes the greeting.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.config import Settings
from chalicelib.context import build_models
from chalicelib.llm.choice import Chooser
from chalicelib.llm.errors import ErrorKind, ModelCallError
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


def check_classifier(settings: Settings) -> Check:
    try:
        backend = build_models(settings).classifier()
    except (ValueError, TypeError) as exc:
        return Check("classifier", settings.models.classifier.name or "?", ok=False, message=str(exc),
                     kind=ErrorKind.BAD_REQUEST)
    name = backend.name
    model_backend = getattr(backend, "model", backend) if name.startswith("lexical+") else backend
    if name == "lexical":
        return Check("classifier", name, message="word matching, no model (set MODEL_URL for a model)")
    chooser = model_backend.chooser                              # type: ignore[attr-defined]
    if not isinstance(chooser, Chooser):                         # a model in this process
        try:
            chooser.load()
        except ModelCallError as exc:
            return Check("classifier", name, chooser.describe(), False, exc.message, kind=exc.kind)
        return Check("classifier", name, chooser.describe(), message="model loaded in process")
    transport = chooser.transport
    if isinstance(transport, OpenAITransport):
        failed = _server_check("classifier", name, transport, chooser.model)
        if failed is not None:
            return failed
    model = chooser.model_name()
    mode = chooser.settle().value
    try:
        choice = chooser.choose(PROBE_MESSAGES, list(PROBE_LABELS))
    except ModelCallError as exc:
        mode = (chooser.current_mode or mode).__str__()
        return Check("classifier", name, transport.describe(), False, explain(exc, transport.describe(), model, mode),
                     mode=mode, kind=exc.kind)
    odds = "per-option probabilities read from logprobs" if choice.probabilities else \
        "no logprobs from this server: answers without probabilities"
    return Check("classifier", name, transport.describe(), True,
                 f"model {model or '(endpoint default)'} answered {choice.label!r} within the constraint; {odds}",
                 mode=choice.mode.value if choice.mode else None)


def check_talk(settings: Settings) -> Check:
    try:
        generator = build_models(settings).generator()
    except (ValueError, KeyError) as exc:
        return Check("free conversation", settings.models.generator.name or "?", ok=False, message=str(exc),
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


def diagnose(settings: Settings) -> list[Check]:
    """One check per use, of the models these settings build."""
    return [check_classifier(settings), check_talk(settings)]


def _describe(model: Any) -> str:
    if model is None:
        return "fallback lines"
    if getattr(model, "name", "") == "lexical":
        return "lexical (word matching, no model)"
    inner = getattr(model, "model", None) if getattr(model, "name", "").startswith("lexical+") else None
    if inner is not None:
        return f"lexical, then {inner.describe()} when unsure"
    return model.describe()


def _transport(model: Any) -> OpenAITransport | None:
    if model is not None and getattr(model, "name", "").startswith("lexical+"):
        model = model.model
    transport = getattr(getattr(model, "chooser", None), "transport", None) or getattr(model, "transport", None)
    return transport if isinstance(transport, OpenAITransport) else None


def banner_lines(classifier: Any, generator: Any) -> list[str]:
    """What the start banner says about the models the services were built with: each use's backend, and
    whether its server answers at all (``GET /models``, no model call)."""
    lines = [f"models: classifier {_describe(classifier)}", f"        free conversation {_describe(generator)}"]
    seen: set[str] = set()
    for transport in (_transport(classifier), _transport(generator)):
        if transport is None or transport.base_url in seen:
            continue
        seen.add(transport.base_url)
        probe = OpenAITransport(transport.base_url, api_key=transport.api_key, timeout=2.0)
        try:
            ids = probe.model_ids()
            lines.append(f"        {transport.base_url} answers ({', '.join(ids[:3]) or 'no model listed'})")
        except ModelCallError as exc:
            lines.append(f"        {transport.base_url}: {exc}")
    if seen:
        lines.append("  `butai doctor` makes one test call of each")
    return lines
