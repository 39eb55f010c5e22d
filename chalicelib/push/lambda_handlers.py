"""The push service as the cloud's functions build it: once per Lambda instance, from the environment.

Two functions use it: the WebSocket API's message function (app.py, `on_ws_message`: a page's
subscription) and the fan-out function on the `current` table's stream (stream.py).  Both need only the
stage's storage, the character catalog (names and voices in a view) and the connection-management API,
so neither builds the director or the model settings.
"""
from __future__ import annotations

import threading

from .. import aws
from ..config import Settings
from ..stage.catalog import CharacterCatalog
from ..stage.dynamo import DynamoStageStore
from ..stage.service import StageService
from .connections import DynamoConnections
from .sender import ManagementApi
from .service import PushService

_lock = threading.Lock()
_service: PushService | None = None


def build(settings: Settings) -> PushService:
    dynamodb = aws.client("dynamodb", settings)
    catalog = CharacterCatalog.from_s3(aws.client("s3", settings), settings.bucket, ttl=settings.manifest_ttl)
    stages = StageService(DynamoStageStore(dynamodb, settings), catalog, assets_base_url=settings.assets_base_url,
                          default_character=settings.default_character)
    return PushService(stages, DynamoConnections(dynamodb, settings), ManagementApi.from_settings(settings))


def service() -> PushService:
    global _service
    if _service is None:
        with _lock:
            if _service is None:
                _service = build(Settings.from_env(models=False))
    return _service


def on_message(connection_id: str, body: str | None) -> None:
    service().message(connection_id, body)
