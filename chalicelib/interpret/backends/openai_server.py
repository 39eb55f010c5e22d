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

from typing import Any

from ...llm.build import build_chooser
from ...llm.choice import PROBE, Chooser
from ...llm.transport import DEFAULT_TIMEOUT, OpenAITransport
from .base import ModelBackend


class OpenAIBackend(ModelBackend):
    chooser: Chooser

    def __init__(self, base_url: str = "", *, model: str | None = None, api_key: str | None = None,
                 mode: str = PROBE, retries: int = 0, timeout: float = DEFAULT_TIMEOUT, max_tokens: int = 16,
                 top_logprobs: int = 20, use_server_tokenizer: bool = True,
                 transport: OpenAITransport | None = None, breaker_failures: int = 0,
                 breaker_seconds: float | None = None, **kwargs: Any) -> None:
        options: dict[str, Any] = dict(model=model, mode=mode, max_tokens=max_tokens, top_logprobs=top_logprobs,
                                       use_server_tokenizer=use_server_tokenizer)
        if transport is not None:          # a transport made elsewhere (a test's, with its own timeout)
            chooser: Chooser = Chooser(transport, **options)
        else:
            chooser = build_chooser("openai", base_url=base_url, api_key=api_key, timeout=timeout,  # type: ignore[assignment]
                                    retries=retries, breaker_failures=breaker_failures,
                                    breaker_seconds=breaker_seconds, **options)
        super().__init__(chooser, **kwargs)

    @property
    def transport(self) -> OpenAITransport:
        return self.chooser.transport           # type: ignore[return-value]

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    @property
    def model(self) -> str | None:
        return self.chooser.model
