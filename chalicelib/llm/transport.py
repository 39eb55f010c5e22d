"""Transports: how a chat-completions body reaches a model and its answer comes back.

Two servers speak the same OpenAI chat-completions JSON:

- `OpenAITransport`: any OpenAI-compatible HTTP server (vLLM, llama.cpp, Ollama, LM Studio, OpenAI);
- `SageMakerTransport`: the vLLM container on a SageMaker endpoint (``/invocations`` takes the same
  body), through the project's boto3 session so that the endpoint override and the region hold.

Both return the parsed JSON object and raise only `ModelCallError`.  Timeouts and retries live here and
nowhere else: every call has one timeout (seconds, per attempt), and only transient failures
(`ErrorKind.TRANSIENT`) are tried again, ``retries`` times, with a short growing pause.  A transport given
a `CircuitBreaker` (llm/breaker.py) asks its server only while the breaker lets it: a call with its
retries is one attempt for the breaker.

Why the standard library and not the ``openai`` SDK: measured for this project, ``openai`` 3.57 with the
packages it brings unpacks to about 36 MB (the SDK alone 30 MB) against a Lambda budget of 250 MB that
boto3 and pydantic already draw on, and its cold import took seconds where ``urllib.request`` takes a few
milliseconds (docs/models.md has the figures).  It also cannot reach a SageMaker endpoint, so a second
client would stay anyway, and butai needs only two routes (``GET /models``, ``POST /chat/completions``)
and fields the SDK passes through untyped (vLLM's ``structured_outputs``).  urllib keeps one code path
for errors and timeouts with nothing to install.
"""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from .breaker import CircuitBreaker
from .errors import ErrorKind, ModelCallError

DEFAULT_TIMEOUT = 10.0
RETRY_PAUSE = 0.2          # seconds before the first retry; doubled for each next one

T = TypeVar("T")


class Transport(Protocol):
    name: str
    timeout: float

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST one chat-completions body; the answer's JSON object."""
        ...

    def describe(self) -> str:
        """Where the calls go, for logs, the banner and `butai doctor`."""
        ...


def with_retries(call: Callable[[], T], retries: int, sleep: Callable[[float], None] = time.sleep) -> T:
    """Run `call`; when it fails with a transient kind, run it again up to `retries` more times."""
    attempt = 0
    while True:
        try:
            return call()
        except ModelCallError as exc:
            if exc.kind not in ErrorKind.TRANSIENT or attempt >= retries:
                raise
            sleep(RETRY_PAUSE * (2 ** attempt))
            attempt += 1


def guarded(breaker: CircuitBreaker | None, call: Callable[[], T]) -> T:
    return call() if breaker is None else breaker.call(call)


def read_json(raw: bytes | str, what: str = "response") -> dict[str, Any]:
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelCallError(ErrorKind.MALFORMED, f"{what} is not UTF-8: {exc}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ModelCallError(ErrorKind.MALFORMED, f"{what} is not JSON: {exc.msg} at {exc.pos}") from None
    if not isinstance(data, dict):
        raise ModelCallError(ErrorKind.MALFORMED, f"{what} is a JSON {type(data).__name__}, not an object")
    return data


def _http_error_kind(status: int, detail: str) -> str:
    lowered = detail.lower()
    if status in (408, 504):
        return ErrorKind.TIMEOUT
    if status >= 500 or status == 429:
        return ErrorKind.UNAVAILABLE
    if "context length" in lowered or "maximum context" in lowered or "too long" in lowered:
        return ErrorKind.CONTEXT_OVERFLOW
    # Ollama, OpenAI, vLLM, LM Studio: 404 (some 400) "model 'x' not found" / "does not exist"
    if status in (400, 404) and "model" in lowered and ("not found" in lowered or "does not exist" in lowered):
        return ErrorKind.MODEL_MISSING
    return ErrorKind.BAD_REQUEST


class OpenAITransport:
    """An OpenAI-compatible server at ``base_url`` (``http://host:port/v1``)."""
    name = "openai"

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = 0, breaker: CircuitBreaker | None = None) -> None:
        if not base_url:
            raise ValueError("an OpenAI-compatible server needs a base URL (BUTAI_MODEL_URL)")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.breaker = breaker
        self._models: list[dict[str, Any]] | None = None

    def describe(self) -> str:
        return self.base_url

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _once(self, method: str, url: str, data: bytes | None, timeout: float) -> bytes:
        request = urllib.request.Request(url, data=data, method=method, headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = exc.read().decode("utf-8", "replace")[:300]
            except Exception:
                pass
            raise ModelCallError(_http_error_kind(exc.code, detail), f"HTTP {exc.code} from {url}: {detail}",
                                 status=exc.code) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)) or "timed out" in str(reason):
                raise ModelCallError(ErrorKind.TIMEOUT, f"no answer from {url} within {timeout}s") from None
            raise ModelCallError(ErrorKind.UNREACHABLE, f"cannot reach {url}: {reason}") from None
        except TimeoutError:
            raise ModelCallError(ErrorKind.TIMEOUT, f"no answer from {url} within {timeout}s") from None
        except (ConnectionError, OSError) as exc:
            # reset or closed mid-answer: the server went away (killed, restarted)
            raise ModelCallError(ErrorKind.UNREACHABLE, f"{url}: {type(exc).__name__}: {exc}") from None

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *,
                timeout: float | None = None, retries: int | None = None) -> bytes:
        url = self.base_url + path
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        wait = self.timeout if timeout is None else timeout
        tries = self.retries if retries is None else retries
        return guarded(self.breaker, lambda: with_retries(lambda: self._once(method, url, data, wait), tries))

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        return read_json(self.request("POST", "/chat/completions", body))

    # ---- what the server says about itself (asked once, kept once answered)

    def models(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        if self._models is None or refresh:
            data = read_json(self.request("GET", "/models", timeout=min(self.timeout, 5.0)), "GET /models")
            entries = data.get("data")
            if not isinstance(entries, list):
                raise ModelCallError(ErrorKind.MALFORMED, "GET /models did not return a model list")
            self._models = [m for m in entries if isinstance(m, dict)]
        return self._models

    def model_ids(self) -> list[str]:
        return [str(m.get("id")) for m in self.models() if m.get("id") is not None]

    def default_model(self) -> str:
        """The server's first model, for a call that names none (servers that hold one model ignore names)."""
        ids = self.model_ids()
        if not ids:
            raise ModelCallError(ErrorKind.MODEL_MISSING, f"{self.base_url} lists no model")
        return ids[0]

    def is_vllm(self) -> bool:
        """vLLM (and its SageMaker container) names itself the owner of its models and reports
        ``max_model_len``; no other common server does."""
        return any(m.get("owned_by") == "vllm" or "max_model_len" in m for m in self.models())


class SageMakerTransport:
    """A SageMaker endpoint whose container takes OpenAI chat-completions bodies (vLLM's does)."""
    name = "sagemaker"

    def __init__(self, endpoint: str, *, client: Any, timeout: float = DEFAULT_TIMEOUT, retries: int = 0,
                 breaker: CircuitBreaker | None = None) -> None:
        if not endpoint:
            raise ValueError("a SageMaker transport needs an endpoint name (BUTAI_SAGEMAKER_ENDPOINT)")
        if client is None:
            raise ValueError("a SageMaker transport needs a sagemaker-runtime client (made from the settings: "
                             "chalicelib.context.model_clients)")
        self.endpoint = endpoint
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.breaker = breaker
        # Handed in, never made here: the caller's settings and session decide the region and the endpoint
        # override, and this layer reads no settings of its own.
        self.client = client

    def describe(self) -> str:
        return f"sagemaker endpoint {self.endpoint}"

    def _once(self, payload: bytes) -> bytes:
        from botocore.exceptions import (
            BotoCoreError,
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            ReadTimeoutError,
        )
        try:
            response = self.client.invoke_endpoint(EndpointName=self.endpoint, ContentType="application/json",
                                                   Accept="application/json", Body=payload)
            return response["Body"].read()
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise ModelCallError(ErrorKind.TIMEOUT,
                                 f"no answer from {self.endpoint} within {self.timeout}s: {exc}") from None
        except EndpointConnectionError as exc:
            raise ModelCallError(ErrorKind.UNREACHABLE, str(exc)) from None
        except ClientError as exc:
            kind, message, status = client_error_kind(exc)
            raise ModelCallError(kind, message, status=status) from None
        except BotoCoreError as exc:
            raise ModelCallError(ErrorKind.UNAVAILABLE, f"{type(exc).__name__}: {exc}") from None
        except TimeoutError as exc:
            raise ModelCallError(ErrorKind.TIMEOUT, str(exc) or "timed out") from None

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        return read_json(guarded(self.breaker, lambda: with_retries(lambda: self._once(payload), self.retries)))


_UNAVAILABLE_CODES = {"ServiceUnavailable", "InternalFailure", "ModelNotReadyException", "ThrottlingException",
                      "InternalDependencyException", "ServiceUnavailableException"}


def client_error_kind(exc: Any) -> tuple[str, str, int | None]:
    """The kind, message and status of a botocore ClientError from ``invoke_endpoint``."""
    response = getattr(exc, "response", {}) or {}
    error = response.get("Error", {})
    code = error.get("Code", "")
    message = error.get("Message", "") or str(exc)
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    if code == "ModelError":
        # the container answered with an error status; OriginalStatusCode tells which
        try:
            original = int(response.get("OriginalStatusCode") or 0)
        except (TypeError, ValueError):
            original = 0
        text = f"model error {original or '?'}: {message}"
        if original in (408, 504):
            return ErrorKind.TIMEOUT, text, original
        if 400 <= original < 500:
            return _http_error_kind(original, message), text, original
        return ErrorKind.UNAVAILABLE, text, original or None
    if code in _UNAVAILABLE_CODES or status >= 500 or status == 429:
        return ErrorKind.UNAVAILABLE, f"{code or status}: {message}", status or None
    if code == "ValidationError" and "not found" in message.lower():
        return ErrorKind.UNAVAILABLE, f"{code}: {message}", status or None
    if "timeout" in code.lower() or "timed out" in message.lower():
        return ErrorKind.TIMEOUT, f"{code}: {message}", status or None
    return ErrorKind.BAD_REQUEST, f"{code or status}: {message}", status or None
