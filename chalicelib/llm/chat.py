"""Plain chat: the body free conversation sends and how its text is read.

Only vLLM gets vLLM's own field (``chat_template_kwargs`` turning a thinking model's reasoning off);
OpenAI's API rejects unknown fields, so every other server gets the standard body alone.
"""
from __future__ import annotations

from typing import Any

from .choice import PROBE, ChoiceMode, completion_message, server_mode
from .errors import ErrorKind, ModelCallError
from .transport import OpenAITransport, Transport


def chat_body(messages: list[dict[str, str]], *, model: str | None, max_tokens: int, temperature: float,
              vllm: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": messages, "max_tokens": max_tokens, "temperature": temperature}
    if vllm:
        body["chat_template_kwargs"] = {"enable_thinking": False}
    if model:
        body["model"] = model
    return body


def chat_text(data: Any) -> str:
    """The text of a chat completion, or `ModelCallError` saying what was wrong."""
    choice, message = completion_message(data)
    text = message.get("content")
    if not isinstance(text, str):
        raise ModelCallError(ErrorKind.INVALID_ANSWER, "content is not text")
    return text


class Chat:
    """Free text from `transport`.  ``mode``: ``probe`` (vLLM's field only for a vLLM server), ``vllm``,
    or a standard mode (``json_schema`` / ``json_object``: plain body)."""

    def __init__(self, transport: Transport, *, model: str | None = None, mode: str = PROBE) -> None:
        self.transport = transport
        self.model = model
        self.mode = mode
        self._vllm: bool | None = None if mode == PROBE else (mode == ChoiceMode.VLLM.value)

    def describe(self) -> str:
        return f"{self.transport.name} at {self.transport.describe()}"

    @property
    def current_mode(self) -> str | None:
        if self._vllm is None:
            return None
        return ChoiceMode.VLLM.value if self._vllm else "standard"

    def _is_vllm(self) -> bool:
        if self._vllm is None:
            mode = server_mode(self.transport)
            if mode is None:
                return False          # the plain body is safe anywhere; ask again next call
            self._vllm = mode is ChoiceMode.VLLM
        return self._vllm

    def model_name(self) -> str | None:
        if not self.model and isinstance(self.transport, OpenAITransport):
            self.model = self.transport.default_model()
        return self.model

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float) -> str:
        vllm = self._is_vllm()
        body = chat_body(messages, model=self.model_name(), max_tokens=max_tokens, temperature=temperature,
                         vllm=vllm)
        return chat_text(self.transport.chat(body))
