"""`sagemaker`: a vLLM container on a SageMaker endpoint (the production path), through `chalicelib.llm`.

The body is the OpenAI chat-completions request (the container's ``/invocations`` route takes it as
is) with vLLM's ``structured_outputs.choice`` restricting the answer to the option labels and ``none``
(``mode`` may name a standard mode for another container).  The ``sagemaker-runtime`` client is
injected (tests pass a moto or stubbed client); without one, the transport builds one with the call
timeout and no botocore retries, honouring the project's endpoint override and region.
"""
from __future__ import annotations

from typing import Any

from ...llm.choice import ChoiceMode, Chooser, choice_body
from ...llm.transport import SageMakerTransport
from ..prompts import PromptFit
from .base import AnswerSheet, ModelBackend


class SageMakerBackend(ModelBackend):
    name = "sagemaker"

    def __init__(self, endpoint: str, *, client: Any = None, model: str | None = None, region: str | None = None,
                 mode: str = ChoiceMode.VLLM.value, retries: int = 0, max_tokens: int = 16, top_logprobs: int = 20,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not endpoint:
            raise ValueError("the sagemaker backend needs an endpoint name (BUTAI_SAGEMAKER_ENDPOINT)")
        self.endpoint = endpoint
        self.model = model
        self.region = region
        self.transport = SageMakerTransport(endpoint, client=client, region=region, timeout=self.timeout,
                                            retries=retries)
        self.chooser = Chooser(self.transport, mode=mode, max_tokens=max_tokens, top_logprobs=top_logprobs)

    @property
    def client(self) -> Any:
        return self.transport.client

    @property
    def current_mode(self) -> str | None:
        return self.chooser.settle().value

    def body(self, fit: PromptFit, sheet: AnswerSheet) -> dict[str, Any]:
        messages = [{"role": "system", "content": fit.system}, {"role": "user", "content": fit.user}]
        return choice_body(messages, sheet.allowed, self.chooser.settle(), model=self.model,
                           max_tokens=self.chooser.max_tokens, top_logprobs=self.chooser.top_logprobs)

    def _complete(self, fit: PromptFit, sheet: AnswerSheet) -> tuple[str, dict[str, float]]:
        messages = [{"role": "system", "content": fit.system}, {"role": "user", "content": fit.user}]
        choice = self.chooser.choose(messages, sheet.allowed, model=self.model)
        return choice.label, sheet.by_token(choice.probabilities)

