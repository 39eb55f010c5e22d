"""`sagemaker`: a vLLM container on a SageMaker endpoint (the production path).

The body is vLLM's OpenAI chat-completions request (the container's
``/invocations`` route takes it as is) with ``structured_outputs.choice``
restricting the answer to the option labels and ``none``.  The
``sagemaker-runtime`` client is injected (tests pass a moto or stubbed
client); without one, a client is built with the call timeout and no
retries, honouring the project's endpoint override.
"""
from __future__ import annotations

import json
from typing import Any

from ..choices import BackendError, ErrorKind
from ..prompts import PromptFit
from .base import AnswerSheet, ModelBackend, chat_body, parse_chat_completion

_UNAVAILABLE_CODES = {"ServiceUnavailable", "InternalFailure", "ModelNotReadyException", "ThrottlingException",
                      "InternalDependencyException", "ServiceUnavailableException"}


class SageMakerBackend(ModelBackend):
    name = "sagemaker"

    def __init__(self, endpoint: str, *, client: Any = None, model: str | None = None, region: str | None = None,
                 max_tokens: int = 16, top_logprobs: int = 20, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not endpoint:
            raise ValueError("the sagemaker backend needs an endpoint name (BUTAI_SAGEMAKER_ENDPOINT)")
        self.endpoint = endpoint
        self.model = model
        self.region = region
        self.max_tokens = max_tokens
        self.top_logprobs = top_logprobs
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            from botocore.config import Config

            from ...aws import session
            from ...config import Settings
            settings = Settings.from_env()
            if self.region:
                settings = settings.with_(region=self.region)
            config = Config(connect_timeout=min(self.timeout, 5.0), read_timeout=self.timeout,
                            retries={"max_attempts": 1, "mode": "standard"})
            self._client = session(settings).client("sagemaker-runtime", endpoint_url=settings.aws_endpoint,
                                                    config=config)
        return self._client

    def body(self, fit: PromptFit, sheet: AnswerSheet) -> dict[str, Any]:
        return chat_body(fit.system, fit.user, sheet, model=self.model, max_tokens=self.max_tokens,
                         top_logprobs=self.top_logprobs)

    def _complete(self, fit: PromptFit, sheet: AnswerSheet) -> tuple[str, dict[str, float]]:
        from botocore.exceptions import (BotoCoreError, ClientError, ConnectTimeoutError, EndpointConnectionError,
                                         ReadTimeoutError)
        payload = json.dumps(self.body(fit, sheet), ensure_ascii=False).encode("utf-8")
        try:
            response = self.client.invoke_endpoint(EndpointName=self.endpoint, ContentType="application/json",
                                                   Accept="application/json", Body=payload)
            raw = response["Body"].read()
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise BackendError(ErrorKind.TIMEOUT, f"no answer from {self.endpoint} within {self.timeout}s: {exc}") from None
        except EndpointConnectionError as exc:
            raise BackendError(ErrorKind.UNAVAILABLE, str(exc)) from None
        except ClientError as exc:
            raise BackendError(*_client_error_kind(exc)) from None
        except BotoCoreError as exc:
            raise BackendError(ErrorKind.UNAVAILABLE, f"{type(exc).__name__}: {exc}") from None
        except TimeoutError as exc:
            raise BackendError(ErrorKind.TIMEOUT, str(exc) or "timed out") from None
        return parse_chat_completion(raw, sheet)


def _client_error_kind(exc: Any) -> tuple[str, str]:
    error = exc.response.get("Error", {}) if hasattr(exc, "response") else {}
    code = error.get("Code", "")
    message = error.get("Message", "") or str(exc)
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) if hasattr(exc, "response") else 0
    original = exc.response.get("OriginalStatusCode") if hasattr(exc, "response") else None
    if code == "ModelError":
        # the container answered with an error status; OriginalStatusCode tells which
        try:
            original_status = int(original or 0)
        except (TypeError, ValueError):
            original_status = 0
        if original_status in (408, 504):
            return ErrorKind.TIMEOUT, f"model error {original_status}: {message}"
        if 400 <= original_status < 500:
            lowered = message.lower()
            if "context length" in lowered or "maximum context" in lowered or "too long" in lowered:
                return ErrorKind.CONTEXT_OVERFLOW, f"model error {original_status}: {message}"
            return ErrorKind.BAD_REQUEST, f"model error {original_status}: {message}"
        return ErrorKind.UNAVAILABLE, f"model error {original_status or '?'}: {message}"
    if code in _UNAVAILABLE_CODES or status >= 500 or status == 429:
        return ErrorKind.UNAVAILABLE, f"{code or status}: {message}"
    if code == "ValidationError" and "not found" in message.lower():
        return ErrorKind.UNAVAILABLE, f"{code}: {message}"
    if "timeout" in code.lower() or "timed out" in message.lower():
        return ErrorKind.TIMEOUT, f"{code}: {message}"
    return ErrorKind.BAD_REQUEST, f"{code or status}: {message}"
