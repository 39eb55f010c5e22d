"""`openai`: the same chat-completions body over HTTP to any OpenAI-compatible
server (vLLM, SGLang, llama.cpp server), with the standard library only.

Settings: ``base_url`` (e.g. ``http://127.0.0.1:8000/v1``), ``model``,
``api_key``, ``timeout`` and ``context_limit``.  When no model is configured,
the first one of ``GET /models`` is used; when no context limit is
configured, the server's ``max_model_len`` (vLLM) is used when it reports
one.  Tokens are counted with the server's ``/tokenize`` (vLLM) when it has
one, else by characters.
"""
from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

from ..choices import BackendError, ErrorKind
from ..prompts import PromptFit
from .base import AnswerSheet, ModelBackend, chat_body, parse_chat_completion


class OpenAIBackend(ModelBackend):
    name = "openai"

    def __init__(self, base_url: str, *, model: str | None = None, api_key: str | None = None,
                 max_tokens: int = 16, top_logprobs: int = 20, use_server_tokenizer: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not base_url:
            raise ValueError("the openai backend needs a base URL (BUTAI_OPENAI_BASE_URL)")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.top_logprobs = top_logprobs
        self.use_server_tokenizer = use_server_tokenizer
        self._models: list[dict[str, Any]] | None = None
        self._tokenize_ok: bool | None = None

    # ---- HTTP

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None,
                 timeout: float | None = None) -> bytes:
        url = self.base_url + path
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method, headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = exc.read().decode("utf-8", "replace")[:300]
            except Exception:
                pass
            if exc.code in (408, 504):
                raise BackendError(ErrorKind.TIMEOUT, f"HTTP {exc.code}: {detail}") from None
            if exc.code >= 500 or exc.code == 429:
                raise BackendError(ErrorKind.UNAVAILABLE, f"HTTP {exc.code}: {detail}") from None
            lowered = detail.lower()
            if "context length" in lowered or "maximum context" in lowered or "too long" in lowered:
                raise BackendError(ErrorKind.CONTEXT_OVERFLOW, f"HTTP {exc.code}: {detail}") from None
            raise BackendError(ErrorKind.BAD_REQUEST, f"HTTP {exc.code}: {detail}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)) or "timed out" in str(reason):
                raise BackendError(ErrorKind.TIMEOUT, f"no answer from {url} within {self.timeout}s") from None
            raise BackendError(ErrorKind.UNAVAILABLE, f"{url}: {reason}") from None
        except (socket.timeout, TimeoutError):
            raise BackendError(ErrorKind.TIMEOUT, f"no answer from {url} within {self.timeout}s") from None
        except (ConnectionError, OSError) as exc:
            raise BackendError(ErrorKind.UNAVAILABLE, f"{url}: {exc}") from None

    # ---- server facts

    def models(self) -> list[dict[str, Any]]:
        if self._models is None:
            raw = self._request("GET", "/models")
            try:
                data = json.loads(raw)
                self._models = [m for m in data.get("data", []) if isinstance(m, dict)]
            except (json.JSONDecodeError, AttributeError):
                raise BackendError(ErrorKind.MALFORMED, "GET /models did not return a model list") from None
        return self._models

    def model_name(self) -> str | None:
        if self.model:
            return self.model
        models = self.models()
        if not models:
            raise BackendError(ErrorKind.UNAVAILABLE, "the server lists no model")
        self.model = str(models[0].get("id"))
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
        url = base + "/tokenize"
        request = urllib.request.Request(url, data=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                                         method="POST", headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=min(self.timeout, 2.0)) as response:
                data = json.loads(response.read())
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

    def body(self, fit: PromptFit, sheet: AnswerSheet) -> dict[str, Any]:
        return chat_body(fit.system, fit.user, sheet, model=self.model_name(), max_tokens=self.max_tokens,
                         top_logprobs=self.top_logprobs)

    def _complete(self, fit: PromptFit, sheet: AnswerSheet) -> tuple[str, dict[str, float]]:
        raw = self._request("POST", "/chat/completions", self.body(fit, sheet))
        return parse_chat_completion(raw, sheet)
