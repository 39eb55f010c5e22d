"""Builds the services the routes use, from Settings, once per process.

Tests and the local runtime install their own with ``use()``; Lambda builds
them lazily from the environment on the first request.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import aws
from .config import Settings
from .stage.catalog import CharacterCatalog
from .stage.dynamo import DynamoStageStore
from .stage.service import StageService

if TYPE_CHECKING:
    from .director import Director
    from .llm.settings import ModelUse
    from .webhooks.service import WebhookService


@dataclass
class Services:
    settings: Settings
    stage: StageService
    director: Director
    # The webhook service is made on first use: a turn never needs it, so a new instance's first
    # turn does not import it (cold start, docs/performance.md).
    make_webhooks: Callable[[], WebhookService] | None = field(default=None, repr=False)
    _webhooks: WebhookService | None = field(default=None, init=False, repr=False)

    @property
    def webhooks(self) -> WebhookService | None:
        if self._webhooks is None and self.make_webhooks is not None:
            with _webhooks_lock:
                if self._webhooks is None:
                    self._webhooks = self.make_webhooks()
        return self._webhooks


_lock = threading.Lock()
_webhooks_lock = threading.Lock()
_services: Services | None = None


def build(settings: Settings, boto3_session=None) -> Services:
    # One session for both clients (aws.client shares one per endpoint): its loader reads the
    # endpoint and retry data once.
    dynamodb = aws.client("dynamodb", settings, boto3_session)
    s3 = aws.client("s3", settings, boto3_session)
    catalog = CharacterCatalog.from_s3(s3, settings.bucket, ttl=settings.manifest_ttl)
    models = settings.models
    from .expression import build_judge
    stage = StageService(DynamoStageStore(dynamodb, settings), catalog,
                         assets_base_url=settings.assets_base_url,
                         default_character=settings.default_character,
                         judge=build_judge(models.judge.name, **_aws_clients(models.judge, settings, boto3_session)),
                         own_origins=settings.own_origins, audio_origins=settings.audio_origins)
    from .director import Director, ScenarioLibrary
    from .interpret.backends import build_backend
    from .talk import Talker, build_generator
    classifier = models.classifier
    library = ScenarioLibrary(s3, settings.bucket, backend_factory=lambda: build_backend(
        classifier.name, **_aws_clients(classifier, settings, boto3_session)))
    director = Director(stage, library,
                        Talker(build_generator(models.generator.name,
                                               **_aws_clients(models.generator, settings, boto3_session))),
                        players_see_debug=settings.players_see_debug)

    def make_webhooks() -> WebhookService:
        from .webhooks.service import WebhookService
        from .webhooks.store import DynamoWebhookStore
        return WebhookService(stage, DynamoWebhookStore(dynamodb, settings), settings)

    return Services(settings=settings, stage=stage, director=director, make_webhooks=make_webhooks)


def _aws_clients(use: ModelUse, settings: Settings, boto3_session) -> dict:
    """A model use's options, with the SageMaker runtime client made from this process's settings and
    session (endpoint override, region), created on the model's first call."""
    options = use.kwargs()
    from .llm.transport import DEFAULT_TIMEOUT
    if use.name is not None and use.name.split("+")[-1] == "sagemaker":
        options["client"] = aws.LazyClient("sagemaker-runtime", settings, boto3_session,
                                           timeout=float(options.get("timeout") or DEFAULT_TIMEOUT))
    return options


def use(services: Services | None) -> None:
    global _services
    with _lock:
        _services = services


def get() -> Services:
    global _services
    if _services is None:
        with _lock:
            if _services is None:
                _services = build(Settings.from_env())
    return _services
