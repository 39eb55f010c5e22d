"""Builds the services the routes use, from one `Settings`, once per process.

Tests and the local runtime install their own with ``use()``; Lambda builds
them lazily from ``Settings.from_env()`` on the first request.  The model uses
(classifier, free conversation, expression judge) are built here too
(`build_models`), so the commands that only need a model (``butai doctor``,
``butai eval-interpret``) build exactly what the services would.
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
from .stage.voices import RenderedLines

if TYPE_CHECKING:
    from .director import Director
    from .expression import ExpressionJudge
    from .interpret.backends import Backend
    from .llm.settings import ModelUse
    from .talk import Generator
    from .webhooks.service import WebhookService


@dataclass
class Models:
    """The model uses one `Settings` asks for."""
    settings: Settings
    boto3_session: object = field(default=None, repr=False)

    def classifier(self) -> Backend:
        """A new classifier backend (each scenario prepares its own)."""
        from .interpret.backends import DEFAULT_BACKEND, build_backend
        use = self.settings.models.classifier
        return build_backend(use.name or DEFAULT_BACKEND, **model_clients(use, self.settings, self.boto3_session))

    def generator(self) -> Generator | None:
        """Free conversation's model; None: the characters' fallback lines answer."""
        from .talk import build_generator
        use = self.settings.models.generator
        return build_generator(use.name, **model_clients(use, self.settings, self.boto3_session))

    def judge(self) -> ExpressionJudge:
        from .expression import build_judge
        use = self.settings.models.judge
        return build_judge(use.name, **model_clients(use, self.settings, self.boto3_session))


def build_models(settings: Settings, boto3_session=None) -> Models:
    from . import observability
    from .llm import breaker
    # A model server's circuit breaker opening or closing is a metric and a log line (llm/ imports neither).
    breaker.on_change(observability.circuit_changed)
    return Models(settings, boto3_session)


@dataclass
class Services:
    settings: Settings
    stage: StageService
    director: Director
    # The model uses these services were built with (the classifier is built per scenario from it).
    models: Models | None = None
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
    models = build_models(settings, boto3_session)
    stage = StageService(DynamoStageStore(dynamodb, settings), catalog,
                         assets_base_url=settings.assets_base_url,
                         default_character=settings.default_character,
                         judge=models.judge(),
                         own_origins=settings.own_origins, audio_origins=settings.audio_origins,
                         rendered=RenderedLines.from_s3(s3, settings.bucket, ttl=settings.manifest_ttl),
                         voice_on=settings.voice)
    from .director import Director, ScenarioLibrary
    from .talk import Talker
    library = ScenarioLibrary(s3, settings.bucket, backend_factory=models.classifier)
    director = Director(stage, library, Talker(models.generator()), players_see_debug=settings.players_see_debug)

    def make_webhooks() -> WebhookService:
        from .webhooks.service import WebhookService
        from .webhooks.store import DynamoWebhookStore
        return WebhookService(stage, DynamoWebhookStore(dynamodb, settings), settings)

    return Services(settings=settings, stage=stage, director=director, models=models, make_webhooks=make_webhooks)


def model_clients(use: ModelUse, settings: Settings, boto3_session=None) -> dict:
    """A model use's options, with the SageMaker runtime client made from this process's settings and
    session (endpoint override, region), created on the model's first call: the model-call layer takes
    the client it is handed and reads no settings of its own."""
    options = use.kwargs()
    from .llm.settings import DEFAULT_SAGEMAKER_TIMEOUT
    if use.name is not None and use.name.split("+")[-1] == "sagemaker":
        options["client"] = aws.LazyClient("sagemaker-runtime", settings, boto3_session,
                                           timeout=float(options.get("timeout") or DEFAULT_SAGEMAKER_TIMEOUT))
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
