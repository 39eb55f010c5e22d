"""The page's push protocol: what a page sends on its socket and what the stage sends back.

Every message is one JSON text frame.  The page sends one message after the socket opens:

    {"action": "subscribe", "stage": "s_…", "key": "bkp_…"}

(`action` is also what API Gateway's route selection reads.)  A page whose socket has carried nothing
for 9 minutes sends `{"action": "ping"}`, which is not answered: API Gateway closes a socket after 10 idle
minutes, and a message keeps it for less than a reconnection costs.  The stage answers a subscription

    {"type": "subscribed", "stage": "s_…", "version": "01J…"}        the subscription holds from now on
    {"type": "error", "error": {"code", "message", "field"?}}         refused (then the socket is closed)

and afterwards, on every change of the stage,

    {"type": "view", "view": {stage, current, log, version, scene}, "after": "01J…"}
        the stage after a change, shaped as GET /stages/{id} answers it, with only the log entries written
        since the page's last view: those after the entry `after` (without `after`: the whole log)
    {"type": "changed", "stage": "s_…", "version": "01J…"}
        news of a change too large to send: fetch the view
    {"type": "audio", "stage": "s_…", "version": "01J….ab12cd34", "lines": [{"id", "audio", "status"}]}
        the stage's own voice for lines already sent (rendered after their write): `audio` the URL to play,
        or `status: failed` when it could not be rendered (the page's own voice reads the line)

A page that holds the entry `after` puts the new entries after it; one that does not (it missed a change)
fetches the view.  A message is kept within one 32 KB frame, which is also what API Gateway meters as one
message: new entries over that (long lines) are sent from a later `after`, and the page fetches the rest.
"""
from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ApiError
from ..stage.models import StageView

SUBSCRIBE = "subscribe"
PING = {"action": "ping"}
# One WebSocket frame at API Gateway, and one metered message: 32 KB.
MAX_MESSAGE_BYTES = 32 * 1000
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


def view(shown: StageView, after: str | None = None, limit: int = MAX_MESSAGE_BYTES) -> bytes | None:
    """``shown`` (whose log holds the entries after ``after``) as one message of at most ``limit`` bytes,
    leaving out its oldest entries when it must (``after`` then names the last one left out); None when
    not even the newest entry fits (send ``changed``)."""
    payload = shown.model_dump(mode="json")
    data = _encode({"type": "view", "view": payload, **({"after": after} if after is not None else {})})
    if len(data) <= limit:
        return data
    log = payload["log"]
    excess, dropped = len(data) - limit, 0
    while dropped < len(log) and excess > 0:            # a first guess: each entry and its comma
        excess -= len(_encode(log[dropped])) + 1
        dropped += 1
    while dropped < len(log):
        data = _encode({"type": "view", "view": {**payload, "log": log[dropped:]}, "after": log[dropped - 1]["id"]})
        if len(data) <= limit:
            return data
        dropped += 1
    return None


def audio(stage_id: str, version: str, lines: list[tuple[str, str, bool]]) -> bytes:
    """Lines voiced since the page's last message: (entry id, audio URL, failed)."""
    return _encode({"type": "audio", "stage": stage_id, "version": version,
                    "lines": [{"id": entry, **({"audio": url} if url else {}),
                               **({"status": "failed"} if failed else {})} for entry, url, failed in lines]})


def error(err: ApiError) -> bytes:
    return _encode({"type": "error", **err.body()})
