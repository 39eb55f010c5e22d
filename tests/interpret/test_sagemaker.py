"""The sagemaker backend: the exact request, moto's queued results, every failure kind."""
from __future__ import annotations

import io
import json

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from chalicelib.interpret import ErrorKind, InterpretChoices, InterpretContext
from chalicelib.interpret.backends.sagemaker import SageMakerBackend
from chalicelib.scenario import PlayerInput

ENDPOINT = "butai-classifier"


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch):
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "BUTAI_AWS_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def call(rules, states):
    state = states["none"]
    choices = InterpretChoices.make(rules, state)
    return choices, InterpretContext.make(rules, state)


def completion(content="A", finish="stop", logprobs=None, **message):
    choice = {"index": 0, "message": {"role": "assistant", "content": content, **message}, "finish_reason": finish}
    if logprobs is not None:
        choice["logprobs"] = {"content": [{"token": content, "logprob": logprobs[0][1],
                                           "top_logprobs": [{"token": t, "logprob": lp} for t, lp in logprobs]}]}
    return {"id": "x", "object": "chat.completion", "choices": [choice]}


def queue(*bodies):
    import requests
    results = [{"Body": b if isinstance(b, str) else json.dumps(b), "ContentType": "application/json"} for b in bodies]
    requests.post("http://motoapi.amazonaws.com/moto-api/static/sagemaker/endpoint-results",
                  json={"results": results}, timeout=5)


def test_answer_and_probabilities_through_moto(call):
    from moto import mock_aws
    choices, context = call
    with mock_aws():
        queue(completion("A", logprobs=[("A", -0.1), ("none", -2.6), ("D", -4.0), ("Q", -5.0)]))
        backend = SageMakerBackend(ENDPOINT, client=boto3.client("sagemaker-runtime", region_name="us-east-1"))
        result = backend.interpret("流す曲を変えてみたら？", choices, context)
    assert result.error is None, result.detail
    assert (result.input, result.token, result.answer) == (PlayerInput.intent("音楽"), "A1", "A")
    assert set(result.scores) == {"A1", "none", "A4"}
    assert abs(sum(result.scores.values()) - 1.0) < 1e-9 and result.scores["A1"] > 0.9
    assert result.elapsed_ms > 0 and result.backend == "sagemaker"


def test_exact_request_body(call):
    choices, context = call
    backend = SageMakerBackend(ENDPOINT, client=boto3.client("sagemaker-runtime", region_name="us-east-1"))
    stubber = Stubber(backend.client)
    fit = backend.fit("流す曲を変えてみたら？", choices, context,
                      __import__("chalicelib.interpret.backends.base", fromlist=["AnswerSheet"]).AnswerSheet.make(choices))
    expected = {
        "messages": [{"role": "system", "content": backend.instructions}, {"role": "user", "content": fit.user}],
        "temperature": 0,
        "max_tokens": 16,
        "logprobs": True,
        "top_logprobs": 20,
        "structured_outputs": {"choice": ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "none"]},
        "chat_template_kwargs": {"enable_thinking": False},
    }
    sent = {}

    def capture(params, **kwargs):
        sent.update(params)

    backend.client.meta.events.register("provide-client-params.sagemaker-runtime.InvokeEndpoint", capture)
    body = json.dumps(completion("none")).encode()
    stubber.add_response("invoke_endpoint", {"Body": StreamingBody(io.BytesIO(body), len(body)),
                                             "ContentType": "application/json"},
                         {"EndpointName": ENDPOINT, "ContentType": "application/json", "Accept": "application/json",
                          "Body": ANY})
    with stubber:
        result = backend.interpret("流す曲を変えてみたら？", choices, context)
    assert result.error is None and result.input == PlayerInput.none()
    assert json.loads(sent["Body"]) == expected
    assert not any(key.startswith("guided_") for key in json.loads(sent["Body"]))


def test_model_name_is_sent_when_configured(call):
    choices, context = call
    backend = SageMakerBackend(ENDPOINT, model="qwen", client=object())
    from chalicelib.interpret.backends.base import AnswerSheet, messages
    sheet = AnswerSheet.make(choices)
    fit = backend.fit("x", choices, context, sheet)
    assert backend.chooser.body(messages(fit.system, fit.user), sheet.allowed)["model"] == "qwen"


@pytest.mark.parametrize("body, kind", [
    ("this is not json", ErrorKind.MALFORMED),
    ({"choices": []}, ErrorKind.MALFORMED),
    ({"error": {"message": "overloaded"}}, ErrorKind.MALFORMED),
    (completion("Z"), ErrorKind.INVALID_ANSWER),                 # not a listed answer
    (completion("A1"), ErrorKind.INVALID_ANSWER),                # the option token, but letters were asked for
    (completion(""), ErrorKind.INVALID_ANSWER),                  # empty
    (completion(None), ErrorKind.INVALID_ANSWER),
    (completion("A", finish="length"), ErrorKind.INVALID_ANSWER),
    (completion("A", finish="content_filter"), ErrorKind.REFUSED),
    (completion(None, refusal="I can't help with that"), ErrorKind.REFUSED),
])
def test_bad_answers_through_moto(call, body, kind):
    from moto import mock_aws
    choices, context = call
    with mock_aws():
        queue(body)
        backend = SageMakerBackend(ENDPOINT, client=boto3.client("sagemaker-runtime", region_name="us-east-1"))
        result = backend.interpret("こんばんは", choices, context)
    assert result.error == kind, result.detail
    assert result.input == PlayerInput.none() and result.token is None


class TimingOut:
    def invoke_endpoint(self, **kwargs):
        raise ReadTimeoutError(endpoint_url="https://runtime.sagemaker.us-east-1.amazonaws.com")


class Raising:
    def __init__(self, exc):
        self.exc = exc

    def invoke_endpoint(self, **kwargs):
        raise self.exc


def client_error(code, status, message="", **extra):
    stubbed = boto3.client("sagemaker-runtime", region_name="us-east-1")
    stubber = Stubber(stubbed)
    stubber.add_client_error("invoke_endpoint", service_error_code=code, service_message=message,
                             http_status_code=status, modeled_fields=extra or None)
    return stubbed, stubber


def test_timeout(call):
    choices, context = call
    result = SageMakerBackend(ENDPOINT, client=TimingOut()).interpret("こんばんは", choices, context)
    assert result.error == ErrorKind.TIMEOUT and result.input == PlayerInput.none()


@pytest.mark.parametrize("code, status, extra, kind", [
    ("ModelError", 424, {"OriginalStatusCode": 500, "OriginalMessage": "boom"}, ErrorKind.UNAVAILABLE),
    ("ModelError", 424, {"OriginalStatusCode": 400, "OriginalMessage": "bad"}, ErrorKind.BAD_REQUEST),
    ("ServiceUnavailable", 503, {}, ErrorKind.UNAVAILABLE),
    ("InternalFailure", 500, {}, ErrorKind.UNAVAILABLE),
    ("ModelNotReadyException", 429, {}, ErrorKind.UNAVAILABLE),
    ("ValidationError", 400, {}, ErrorKind.BAD_REQUEST),
])
def test_service_errors(call, code, status, extra, kind):
    choices, context = call
    client, stubber = client_error(code, status, "it failed", **extra)
    with stubber:
        result = SageMakerBackend(ENDPOINT, client=client).interpret("こんばんは", choices, context)
    assert result.error == kind, result.detail
    assert result.input == PlayerInput.none()


def test_missing_endpoint_is_unavailable(call):
    choices, context = call
    client, stubber = client_error("ValidationError", 400, f"Endpoint {ENDPOINT} of account 1 not found.")
    with stubber:
        result = SageMakerBackend(ENDPOINT, client=client).interpret("こんばんは", choices, context)
    assert result.error == ErrorKind.UNAVAILABLE


def test_unexpected_exception_is_internal(call):
    choices, context = call
    result = SageMakerBackend(ENDPOINT, client=Raising(ZeroDivisionError("x"))).interpret("a", choices, context)
    assert result.error == ErrorKind.INTERNAL and result.input == PlayerInput.none()


def test_context_overflow_without_a_call(call):
    choices, context = call
    result = SageMakerBackend(ENDPOINT, client=Raising(AssertionError("must not be called")),
                              context_limit=100).interpret("こんばんは", choices, context)
    assert result.error == ErrorKind.CONTEXT_OVERFLOW and result.examples_dropped


def test_the_client_is_made_from_the_settings(monkeypatch, call):
    """The transport reads no settings: the services hand it a client made from theirs (region, endpoint
    override, the call's timeout and no botocore retries)."""
    from moto import mock_aws

    from chalicelib.config import Settings
    from chalicelib.context import build_models
    choices, context = call
    settings = Settings.from_env({"AWS_REGION": "us-east-1", "BUTAI_CLASSIFIER": "sagemaker",
                                  "BUTAI_SAGEMAKER_ENDPOINT": ENDPOINT, "BUTAI_CLASSIFIER_TIMEOUT": "3"})
    with mock_aws():
        queue(completion("none"))
        backend = build_models(settings).classifier()
        result = backend.interpret("こんばんは", choices, context)
        assert backend.client.meta.config.read_timeout == 3
        assert backend.client.meta.config.retries["total_max_attempts"] == 1
    assert result.error is None and result.input == PlayerInput.none()
