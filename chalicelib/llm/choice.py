"""Constrained choice: a model picks one of a few labels, with a probability per label when it can.

Generic on purpose: labels in (``["A", "B", "none"]``, expression keys, …), one label and a
``{label: probability}`` map out.  The classifier maps labels back to its options; any other
"pick one of these" judgement can use the same call.

Three ways to make the server keep to the labels (`ChoiceMode`):

``vllm``
    vLLM's own ``structured_outputs: {"choice": labels}``; the answer is the bare label.  The production
    container (SageMaker) and any vLLM server.
``json_schema``
    OpenAI's standard ``response_format: {"type": "json_schema", ...}`` with a schema whose one property
    ``answer`` is an ``enum`` of the labels; the answer is ``{"answer": "B"}``.  OpenAI, Ollama, LM Studio,
    llama.cpp's ``llama-server``, vLLM.
``json_object``
    ``response_format: {"type": "json_object", "schema": ...}``, the older form that llama-cpp-python's
    server (and llama-server) take.  Same schema, same answer.

``probe`` (the default for an OpenAI-compatible server) asks ``GET /models`` once: a vLLM server gets
``vllm``; any other starts with ``json_schema`` and, when the server rejects that body (a 4xx, or an error naming the field), moves
to ``json_object`` for good.  The mode in use is reported with every answer (the debug record shows it).

Probabilities come from the answer token's ``top_logprobs`` when the server returns them (vLLM, OpenAI,
llama.cpp do; Ollama does not): the mass of the tokens that spell the start of a label, renormalised
over the labels found.  Without logprobs the map is empty and the answer alone counts.
"""
from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from .errors import ErrorKind, ModelCallError
from .transport import OpenAITransport, Transport


class ChoiceMode(StrEnum):
    VLLM = "vllm"
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"


PROBE = "probe"
MODE_SETTINGS = (PROBE, *(m.value for m in ChoiceMode))
ANSWER_FIELD = "answer"
# Room for {"answer": "none"} with the whitespace a JSON grammar allows; a bare label needs far less.
JSON_MAX_TOKENS = 48


def answer_schema(labels: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": {ANSWER_FIELD: {"type": "string", "enum": list(labels)}},
            "required": [ANSWER_FIELD], "additionalProperties": False}


def choice_body(messages: list[dict[str, str]], labels: Sequence[str], mode: ChoiceMode, *,
                model: str | None = None, max_tokens: int = 16, top_logprobs: int = 20) -> dict[str, Any]:
    """The chat-completions body that asks for one of `labels` in `mode`."""
    body: dict[str, Any] = {}
    if model:
        body["model"] = model
    body.update({"messages": messages, "temperature": 0})
    if mode is ChoiceMode.VLLM:
        body.update({"max_tokens": max_tokens, "logprobs": True, "top_logprobs": top_logprobs,
                     "structured_outputs": {"choice": list(labels)},
                     "chat_template_kwargs": {"enable_thinking": False}})
        return body
    body.update({"max_tokens": max(max_tokens, JSON_MAX_TOKENS), "logprobs": True, "top_logprobs": top_logprobs})
    if mode is ChoiceMode.JSON_SCHEMA:
        body["response_format"] = {"type": "json_schema",
                                   "json_schema": {"name": "choice", "strict": True, "schema": answer_schema(labels)}}
    else:
        body["response_format"] = {"type": "json_object", "schema": answer_schema(labels)}
    return body


# ---------------------------------------------------------------- reading the answer

@dataclass(frozen=True)
class Choice:
    label: str
    probabilities: dict[str, float]      # per label; empty when the server gave no logprobs
    mode: ChoiceMode | None              # None: a model in process, which scores the labels
    raw: str = ""                        # the content as the model wrote it


def completion_message(data: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first choice and its message of a chat completion, or `ModelCallError` saying what is wrong."""
    if not isinstance(data, dict):
        raise ModelCallError(ErrorKind.MALFORMED, f"response is a JSON {type(data).__name__}, not an object")
    if "error" in data and not data.get("choices"):
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise ModelCallError(ErrorKind.MALFORMED, f"response carries an error: {message}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelCallError(ErrorKind.MALFORMED, "response has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ModelCallError(ErrorKind.MALFORMED, "response choice has no message")
    if choice.get("finish_reason") == "content_filter":
        raise ModelCallError(ErrorKind.REFUSED, "finish_reason content_filter")
    if message.get("refusal"):
        raise ModelCallError(ErrorKind.REFUSED, f"refusal: {message.get('refusal')}")
    return choice, message


def read_choice(data: Any, labels: Sequence[str], mode: ChoiceMode) -> Choice:
    """The label a chat completion chose, and per-label probabilities when it carries logprobs."""
    choice, message = completion_message(data)
    finish = choice.get("finish_reason")
    if finish == "length":
        raise ModelCallError(ErrorKind.INVALID_ANSWER, "answer cut off (finish_reason length)")
    if finish not in (None, "stop", "eos", "end_turn"):
        raise ModelCallError(ErrorKind.INVALID_ANSWER, f"unexpected finish_reason {finish!r}")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ModelCallError(ErrorKind.INVALID_ANSWER, "empty answer")
    if mode is ChoiceMode.VLLM:
        label, offset = content.strip().strip('"').strip(), None
    else:
        label, offset = _json_answer(content)
    if label not in labels:
        raise ModelCallError(ErrorKind.INVALID_ANSWER, f"answer {content.strip()[:60]!r} is not one of {list(labels)}")
    entries = _logprob_entries(choice)
    top = _top_at(entries, content, offset) if entries else []
    return Choice(label, label_probabilities(labels, top), mode, content)


def _json_answer(content: str) -> tuple[str, int | None]:
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        raise ModelCallError(ErrorKind.INVALID_ANSWER,
                             f"answer {content.strip()[:60]!r} is not the JSON object asked for") from None
    if not isinstance(data, dict) or not isinstance(data.get(ANSWER_FIELD), str):
        raise ModelCallError(ErrorKind.INVALID_ANSWER, f"answer {content.strip()[:60]!r} has no {ANSWER_FIELD!r}")
    found = re.search(r'"%s"\s*:\s*"' % ANSWER_FIELD, content)
    return data[ANSWER_FIELD], (found.end() if found else None)


def _logprob_entries(choice: dict[str, Any]) -> list[dict[str, Any]]:
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
        return [e for e in logprobs["content"] if isinstance(e, dict)]
    return []


def _top_at(entries: list[dict[str, Any]], content: str, offset: int | None) -> list[tuple[str, Any]]:
    """The alternatives at the position where the label starts: the first token for a bare label, the
    token covering the value's first character for a JSON answer.  When that token also carries text
    before the value (``"B`` or `` "B``), the same leading text is cut from every alternative."""
    entry: dict[str, Any] | None = None
    if offset is None:
        entry, cut = entries[0], 0
    else:
        position, cut = 0, 0
        for candidate in entries:
            text = str(candidate.get("token", ""))
            if position + len(text) > offset:
                entry, cut = candidate, offset - position
                break
            position += len(text)
        if entry is None:
            return []
    chosen = str(entry.get("token", ""))
    lead = chosen[:cut]
    pairs = [(str(t.get("token", "")), t.get("logprob")) for t in entry.get("top_logprobs") or []
             if isinstance(t, dict)]
    if not pairs and "token" in entry:
        pairs = [(chosen, entry.get("logprob"))]
    return [(text[cut:], lp) for text, lp in pairs if text.startswith(lead)]


def label_probabilities(labels: Sequence[str], top: Sequence[tuple[str, Any]]) -> dict[str, float]:
    """Per-label probabilities from one position's top log-probabilities, renormalised over the labels
    found there.  A token counts for a label when, stripped, it is the whole label, or a prefix of
    exactly one label."""
    mass: dict[str, float] = {}
    for token_text, logprob in top:
        if logprob is None or not isinstance(logprob, (int, float)) or math.isnan(logprob):
            continue
        piece = str(token_text).strip().strip('"').strip()
        if not piece:
            continue
        if piece in labels:
            target = piece
        else:
            starting = [a for a in labels if a.startswith(piece)]
            if len(starting) != 1:
                continue
            target = starting[0]
        mass[target] = mass.get(target, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return {}
    return {label: value / total for label, value in mass.items()}


# ---------------------------------------------------------------- the call

def server_mode(transport: Transport) -> ChoiceMode | None:
    """What `probe` settles on for this server: vLLM's own field where the server is vLLM, else the
    OpenAI standard.  None when the server cannot be asked now (ask again next call)."""
    if isinstance(transport, OpenAITransport):
        try:
            return ChoiceMode.VLLM if transport.is_vllm() else ChoiceMode.JSON_SCHEMA
        except ModelCallError:
            return None
    return ChoiceMode.VLLM       # a SageMaker endpoint runs the vLLM container


def rejects_json_schema(exc: ModelCallError) -> bool:
    """Whether a failed json_schema call was the server refusing that form: a 4xx, or any error status
    whose message names the field (llama-cpp-python's server answers its validation error with a 500
    saying it expected 'text' or 'json_object')."""
    if exc.status is None:
        return False
    if exc.kind == ErrorKind.BAD_REQUEST:
        return True
    lowered = exc.message.lower()
    return "response_format" in lowered or "json_object" in lowered or "json_schema" in lowered


class ChoiceModel(Protocol):
    """What every constrained-choice model offers its callers (the classifier, the expression judge): a
    server behind a `Transport` (`Chooser`) or a model in this process (`llm.local.LocalModel`)."""
    @property
    def name(self) -> str: ...

    @property
    def timeout(self) -> float: ...

    def choose(self, messages: list[dict[str, str]], labels: Sequence[str]) -> Choice: ...

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        """The prompt's tokens as the model will read them; `LookupError` when it cannot tell."""
        ...

    def context_limit(self) -> int | None: ...

    def defuse(self, text: str) -> str:
        """`text` with whatever the model would read as a control token broken up."""
        ...

    def single_tokens(self, labels: Sequence[str]) -> bool:
        """Whether every label is one distinct token (a label scheme is chosen so where it can)."""
        ...

    @property
    def current_mode(self) -> str | None: ...

    def describe(self) -> str: ...


@dataclass
class Chooser:
    """Asks `transport` to choose among labels.  ``mode`` is a `ChoiceMode` value or ``probe``; ``model``
    None asks an OpenAI-compatible server for its first model."""
    transport: Transport
    mode: str = PROBE
    model: str | None = None
    max_tokens: int = 16
    top_logprobs: int = 20
    use_server_tokenizer: bool = True
    _settled: ChoiceMode | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _tokenize_ok: bool | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in MODE_SETTINGS:
            raise ValueError(f"unknown choice mode {self.mode!r}; expected one of {', '.join(MODE_SETTINGS)}")
        if self.mode != PROBE:
            self._settled = ChoiceMode(self.mode)

    @property
    def name(self) -> str:
        return self.transport.name

    @property
    def timeout(self) -> float:
        return self.transport.timeout

    def describe(self) -> str:
        return self.transport.describe()

    @property
    def current_mode(self) -> ChoiceMode | None:
        """The mode calls use now (None: a probe not yet made)."""
        return self._settled

    def model_name(self) -> str | None:
        if not self.model and isinstance(self.transport, OpenAITransport):
            self.model = self.transport.default_model()
        return self.model

    def defuse(self, text: str) -> str:
        return text            # the server applies its own template to the message text

    def single_tokens(self, labels: Sequence[str]) -> bool:
        return True            # the answer is constrained to the labels whatever their tokens

    def context_limit(self) -> int | None:
        """The server's own figure when it reports one (vLLM's ``max_model_len``)."""
        if not isinstance(self.transport, OpenAITransport):
            return None
        for entry in self.transport.models():
            if self.model is None or entry.get("id") == self.model:
                value = entry.get("max_model_len") or entry.get("context_length")
                if isinstance(value, int) and value > 0:
                    return value
        return None

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        """The server's ``/tokenize`` (vLLM) when it has one; asked once, then never again if it fails."""
        transport = self.transport
        if not isinstance(transport, OpenAITransport) or not self.use_server_tokenizer or self._tokenize_ok is False:
            raise LookupError("no server tokenizer")
        base = transport.base_url[:-3] if transport.base_url.endswith("/v1") else transport.base_url
        body = {"model": self.model_name(), "messages": messages, "add_generation_prompt": True}
        tokenizer = OpenAITransport(base, api_key=transport.api_key, timeout=min(transport.timeout, 2.0))
        try:
            data = json.loads(tokenizer.request("POST", "/tokenize", body, retries=0))
            count = data.get("count")
            if count is None and isinstance(data.get("tokens"), list):
                count = len(data["tokens"])
            if not isinstance(count, int):
                raise ValueError("no count")
            self._tokenize_ok = True
            return count
        except Exception:
            self._tokenize_ok = False       # don't ask again; characters from now on
            raise LookupError("the server has no /tokenize") from None

    def settle(self) -> ChoiceMode:
        if self._settled is None:
            with self._lock:
                if self._settled is None:
                    mode = server_mode(self.transport)
                    if mode is None:
                        return ChoiceMode.JSON_SCHEMA     # the standard body for now; the call will say why
                    self._settled = mode
        return self._settled

    def body(self, messages: list[dict[str, str]], labels: Sequence[str], mode: ChoiceMode | None = None
             ) -> dict[str, Any]:
        return choice_body(messages, labels, mode or self.settle(), model=self.model_name(),
                           max_tokens=self.max_tokens, top_logprobs=self.top_logprobs)

    def choose(self, messages: list[dict[str, str]], labels: Sequence[str]) -> Choice:
        mode = self.settle()
        try:
            return self._call(messages, labels, mode)
        except ModelCallError as exc:
            # A probed standard server that rejects json_schema bodies may take the older json_object form.
            if not (self.mode == PROBE and mode is ChoiceMode.JSON_SCHEMA and rejects_json_schema(exc)):
                raise
            result = self._call(messages, labels, ChoiceMode.JSON_OBJECT)
            self._settled = ChoiceMode.JSON_OBJECT
            return result

    def _call(self, messages, labels, mode: ChoiceMode) -> Choice:
        return read_choice(self.transport.chat(self.body(messages, labels, mode)), labels, mode)
