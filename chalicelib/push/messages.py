"""The page's push protocol: what a page sends on its socket and what the stage sends back.

Every message is one JSON text frame.  The page sends one message after the socket opens:

    {"action": "subscribe", "stage": "s_…", "key": "bkp_…"}

(`action` is also what API Gateway's route selection reads.)  The stage answers

    {"type": "subscribed", "stage": "s_…", "version": "01J…"}        the subscription holds from now on
    {"type": "error", "error": {"code", "message", "field"?}}         refused (then the socket is closed)

and afterwards, on every change of the stage,

    {"type": "view", "view": {stage, current, log, version, scene}}  what GET /stages/{id} answers now
    {"type": "changed", "stage": "s_…", "version": "01J…"}            the same news when the view is too
                                                                      large for one message: fetch it
"""
from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ApiError
from ..stage.models import StageView

SUBSCRIBE = "subscribe"
# API Gateway refuses a WebSocket message over 128 KB; a view that does not fit goes out as `changed`.
MAX_MESSAGE_BYTES = 128 * 1000
# What a page sends is one small subscribe message; anything much larger is refused unread.
INBOUND_MAX_BYTES = 4 * 1024


class Subscribe(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["subscribe"]
    stage: str = Field(min_length=1, max_length=64)
    key: str = Field(min_length=1, max_length=256)


def _encode(payload: dict) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def subscribed(stage_id: str, version: str) -> bytes:
    return _encode({"type": "subscribed", "stage": stage_id, "version": version})


def changed(stage_id: str, version: str) -> bytes:
    return _encode({"type": "changed", "stage": stage_id, "version": version})


def view(shown: StageView) -> bytes:
    """The view itself; one over MAX_MESSAGE_BYTES is sent as ``changed`` instead (see service.py)."""
    return _encode({"type": "view", "view": shown.model_dump(mode="json")})


def error(err: ApiError) -> bytes:
    return _encode({"type": "error", **err.body()})
