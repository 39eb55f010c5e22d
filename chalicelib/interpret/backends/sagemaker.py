"""`sagemaker`: a vLLM container on a SageMaker endpoint (the production path), through `chalicelib.llm`.

The body is the OpenAI chat-completions request (the container's ``/invocations`` route takes it as
is) with vLLM's ``structured_outputs.choice`` restricting the answer to the option labels and ``none``
(``mode`` may name a standard mode for another container).  The ``sagemaker-runtime`` client is handed
in: the services make it from their settings and session (`chalicelib.context.model_clients`), tests
from moto or a stub.
"""
from __future__ import annotations

from typing import Any

from ...llm.build import build_chooser
from ...llm.choice import ChoiceMode, Chooser
from ...llm.settings import DEFAULT_SAGEMAKER_TIMEOUT
from ...llm.transport import SageMakerTransport
from .base import ModelBackend


class SageMakerBackend(ModelBackend):
    chooser: Chooser

    def __init__(self, endpoint: str, *, client: Any = None, model: str | None = None,
                 mode: str = ChoiceMode.VLLM.value, retries: int = 0, timeout: float = DEFAULT_SAGEMAKER_TIMEOUT,
                 max_tokens: int = 16, top_logprobs: int = 20, breaker_failures: int = 0,
                 breaker_seconds: float | None = None, **kwargs: Any) -> None:
        super().__init__(build_chooser("sagemaker", endpoint=endpoint, client=client, model=model, mode=mode,
                                       retries=retries, timeout=timeout, max_tokens=max_tokens,
                                       top_logprobs=top_logprobs, breaker_failures=breaker_failures,
                                       breaker_seconds=breaker_seconds), **kwargs)

    @property
    def transport(self) -> SageMakerTransport:
        return self.chooser.transport           # type: ignore[return-value]

    @property
    def endpoint(self) -> str:
        return self.transport.endpoint

    @property
    def client(self) -> Any:
        return self.transport.client

    @property
    def model(self) -> str | None:
        return self.chooser.model

    @property
    def current_mode(self) -> str | None:
        return self.chooser.settle().value
