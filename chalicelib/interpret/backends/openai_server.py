"""`openai`: constrained choice over HTTP with any OpenAI-compatible server (vLLM, llama.cpp, Ollama,
LM Studio, OpenAI), through `chalicelib.llm`.

Settings: ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``), ``model``, ``api_key``, ``mode``
(``probe`` | ``vllm`` | ``json_schema`` | ``json_object``, see `chalicelib.llm.choice`), ``retries``,
``timeout`` and ``context_limit``.  When no model is configured, the first one of ``GET /models`` is
used; when no context limit is configured, the server's ``max_model_len`` (vLLM) is used when it
reports one.  Tokens are counted with the server's ``/tokenize`` (vLLM) when it has one, else by
characters.
"""
from __future__ import annotations

import json
from typing import Any

from ...llm.choice import PROBE, ChoiceMode, Chooser, choice_body
from ...llm.transport import OpenAITransport
from ..prompts import PromptFit
from .base import AnswerSheet, ModelBackend


class OpenAIBackend(ModelBackend):
    name = "openai"

    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None,
                 mode: str = PROBE, retries: int = 0, max_tokens: int = 16, top_logprobs: int = 20,
                 use_server_tokenizer: bool = True, transport: OpenAITransport | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not base_url and transport is None:
            raise ValueError("the openai backend needs a base URL (BUTAI_MODEL_URL or BUTAI_OPENAI_BASE_URL)")
        self.transport = transport or OpenAITransport(base_url, api_key=api_key, timeout=self.timeout,
                                                      retries=retries)
        self.base_url = self.transport.base_url
        self.model = model
        self.chooser = Chooser(self.transport, mode=mode, max_tokens=max_tokens, top_logprobs=top_logprobs)
        self.use_server_tokenizer = use_server_tokenizer
        self._tokenize_ok: bool | None = None

    @property
    def current_mode(self) -> str | None:
        mode = self.chooser.current_mode
        return None if mode is None else mode.value

    # ---- server facts

    def models(self) -> list[dict[str, Any]]:
        return self.transport.models()

    def model_name(self) -> str | None:
        if not self.model:
            self.model = self.transport.default_model()
        return self.model

    def _server_context_limit(self) -> int | None:
        for entry in self.models():
            if self.model is None or entry.get("id") == self.model:
                value = entry.get("max_model_len") or entry.get("context_length")
                if isinstance(value, int) and value > 0:
                    return value
        return None

    def _count_tokens(self, system: str, user: str) -> int:
        if not self.use_server_tokenizer or self._tokenize_ok is False:
            raise LookupError("no server tokenizer")
        base = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
        body = {"model": self.model_name(),
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                "add_generation_prompt": True}
        tokenizer = OpenAITransport(base, api_key=self.transport.api_key, timeout=min(self.timeout, 2.0))
        try:
            data = json.loads(tokenizer.request("POST", "/tokenize", body))
            count = data.get("count")
            if count is None and isinstance(data.get("tokens"), list):
                count = len(data["tokens"])
            if not isinstance(count, int):
                raise ValueError("no count")
            self._tokenize_ok = True
            return count
        except Exception:
            self._tokenize_ok = False       # don't ask again; characters from now on
            raise

    # ---- the call

    def body(self, fit: PromptFit, sheet: AnswerSheet, mode: ChoiceMode | None = None) -> dict[str, Any]:
        messages = [{"role": "system", "content": fit.system}, {"role": "user", "content": fit.user}]
        return choice_body(messages, sheet.allowed, mode or self.chooser.settle(), model=self.model_name(),
                           max_tokens=self.chooser.max_tokens, top_logprobs=self.chooser.top_logprobs)

    def _complete(self, fit: PromptFit, sheet: AnswerSheet) -> tuple[str, dict[str, float]]:
        messages = [{"role": "system", "content": fit.system}, {"role": "user", "content": fit.user}]
        choice = self.chooser.choose(messages, sheet.allowed, model=self.model_name())
        return choice.label, sheet.by_token(choice.probabilities)
