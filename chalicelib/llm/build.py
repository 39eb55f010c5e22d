"""Constrained-choice models by name, from a model use's options (`llm.settings.ModelUse`).

``openai`` and ``sagemaker`` are a `Chooser` over a transport; ``transformers`` a `LocalModel` in this
process.  The classifier's model backends and the expression judge are both built here, so both reach a
model the same way.  A SageMaker endpoint's client is handed in (``client``): this layer reads no settings.
"""
from __future__ import annotations

from typing import Any

from .breaker import DEFAULT_OPEN_SECONDS, for_server
from .choice import PROBE, ChoiceMode, ChoiceModel, Chooser
from .transport import DEFAULT_TIMEOUT, OpenAITransport, SageMakerTransport, Transport

MODELS = ("openai", "sagemaker", "transformers")


def build_chooser(name: str, *, timeout: float = DEFAULT_TIMEOUT, **options: Any) -> ChoiceModel:
    """``openai``: base_url, model, api_key, mode (probe), retries, max_tokens, top_logprobs,
    use_server_tokenizer; ``sagemaker``: endpoint, client, model, mode (vllm), retries, max_tokens,
    top_logprobs; both: breaker_failures (0: no circuit breaker), breaker_seconds (llm/breaker.py);
    ``transformers``: model_path, device, dtype, model, tokenizer."""
    failures = int(options.pop("breaker_failures", 0) or 0)
    seconds = float(options.pop("breaker_seconds", DEFAULT_OPEN_SECONDS) or DEFAULT_OPEN_SECONDS)
    if name == "openai":
        if not options.get("base_url"):
            raise ValueError("the openai backend needs a base URL (BUTAI_MODEL_URL or BUTAI_OPENAI_BASE_URL)")
        base_url = options.pop("base_url")
        transport: Transport = OpenAITransport(
            base_url, api_key=options.pop("api_key", None), timeout=timeout, retries=options.pop("retries", 0),
            breaker=for_server(base_url.rstrip("/"), failures=failures, open_seconds=seconds))
        return Chooser(transport, mode=options.pop("mode", PROBE), **options)
    if name == "sagemaker":
        name_of_endpoint = options.pop("endpoint", "")
        endpoint: Transport = SageMakerTransport(
            name_of_endpoint, client=options.pop("client", None), timeout=timeout, retries=options.pop("retries", 0),
            breaker=for_server(f"sagemaker endpoint {name_of_endpoint}", failures=failures,
                                       open_seconds=seconds))
        return Chooser(endpoint, mode=options.pop("mode", ChoiceMode.VLLM.value), **options)
    if name == "transformers":
        from .local import LocalModel
        return LocalModel(options.pop("model_path", ""), timeout=timeout, **options)
    raise ValueError(f"unknown model {name!r}; expected one of {', '.join(MODELS)}")
