"""Builds the services the routes use, from Settings, once per process.

Tests and the local runtime install their own with ``use()``; Lambda builds
them lazily from the environment on the first request.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
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
    webhooks: WebhookService | None = None


_lock = threading.Lock()
_services: Services | None = None


def build(settings: Settings, boto3_session=None) -> Services:
    # One session for both clients: its loader reads the shared endpoint and retry data once.
    session = aws.session(settings, boto3_session)
    dynamodb = aws.client("dynamodb", settings, session)
    s3 = aws.client("s3", settings, session)
    catalog = CharacterCatalog.from_s3(s3, settings.bucket, ttl=settings.manifest_ttl)
    models = settings.models
    from .expression import build_judge
    stage = StageService(DynamoStageStore(dynamodb, settings), catalog,
                         assets_base_url=settings.assets_base_url,
                         default_character=settings.default_character,
                         judge=build_judge(models.judge.name or "lexicon", **_aws_clients(models.judge, settings, session)),
                         own_origins=settings.own_origins, audio_origins=settings.audio_origins)
    from .director import Director, ScenarioLibrary
    from .interpret.backends import build_backend
    from .talk import Talker, build_generator
    classifier = models.classifier
    library = ScenarioLibrary(s3, settings.bucket, backend_factory=lambda: build_backend(
        classifier.name or "lexical", **_aws_clients(classifier, settings, session)))
    director = Director(stage, library,
                        Talker(build_generator(models.generator.name,
                                               **_aws_clients(models.generator, settings, session))),
                        players_see_debug=settings.players_see_debug)
    from .webhooks.service import WebhookService
    from .webhooks.store import DynamoWebhookStore
    webhooks = WebhookService(stage, DynamoWebhookStore(dynamodb, settings), settings)
    return Services(settings=settings, stage=stage, director=director, webhooks=webhooks)


def _aws_clients(use: ModelUse, settings: Settings, session) -> dict:
    """A model use's options, with the SageMaker runtime client made from this process's one session and
    settings (endpoint override, region), created on the model's first call."""
    options = use.kwargs()
    if use.name is not None and use.name.split("+")[-1] == "sagemaker":
        options["client"] = aws.LazyClient("sagemaker-runtime", settings, session,
                                           timeout=float(options.get("timeout") or 10.0))
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
