"""Subscribing a page to a stage, and sending each change of a stage to its subscribed pages.

The same logic runs in the cloud (the WebSocket API's message function and the stream fan-out
function, chalicelib/push/lambda_handlers.py) and in the local runtime (butai_tools/local/push.py); only
the sockets (a ``Sender``) and what starts a fan-out differ.
"""
from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pydantic import ValidationError

from ..errors import ApiError, NotFound, PayloadTooLarge, Unauthorized, Unavailable, ValidationFailed
from ..stage import keys
from ..stage.models import StageView
from ..stage.service import AGENT, PLAYER, StageService, view_version
from ..stage.store import StageRecord
from ..stage.voices import voiced_from_json
from . import messages
from .connections import Connection
from .sender import Gone, Sender

log = logging.getLogger("butai.push")
# Sends to one stage's pages go out side by side: a slow socket holds only its own message.
PARALLEL_SENDS = 16
# The newest log entries a push reads and may carry: more than one turn writes (a reply and its lines).
NEWS_ENTRIES = 10


@dataclass
class FanOut:
    """What one fan-out did (the benchmark and the logs read it)."""
    subscribed: int = 0
    sent: int = 0
    gone: int = 0          # sockets found closed: their subscriptions were removed
    refused: int = 0       # subscriptions whose key no longer opens the stage: closed and removed
    nudged: bool = False   # not even the newest entry fitted in one message: `changed` went out instead


class PushService:
    def __init__(self, stages: StageService, connections, sender: Sender, parallel: int = PARALLEL_SENDS):
        self.stages = stages
        self.connections = connections
        self.sender = sender
        # parallel=1: the sender only queues (the local run's sockets), so the sends need no threads.
        self._pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="push") if parallel > 1 else None

    # -- a page's message ------------------------------------------------------------------------
    def message(self, connection_id: str, body: str | bytes | None) -> bool:
        """Handles what a page sent on its socket (a subscription, or a keep-alive ping); answers a
        subscription on the same socket.  A refused one is answered with an error and the socket closed.
        False when the socket is to be closed."""
        try:
            request = self._parse(body)
            if request is None:
                return True              # a ping: its only work is to have reached API Gateway
            stage = self.stages.check_key(request.stage, request.key, agent_only=False)
            hashed = keys.hash_key(request.key)
            which = PLAYER if keys.same_hash(stage.player_key_hash, hashed) else AGENT
            self.connections.add(Connection(stage.stage_id, connection_id, which, hashed))
        except ApiError as err:
            self._refuse(connection_id, err)
            return False
        except Exception:  # noqa: BLE001 - storage trouble: the page tries again later
            log.exception("subscription failed")
            self._refuse(connection_id, Unavailable("the stage's storage is busy; connect again shortly"))
            return False
        self._send_quietly(connection_id, messages.subscribed(stage.stage_id, stage.version))
        return True

    def _parse(self, body: str | bytes | None) -> messages.Subscribe | None:
        raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else (body or b"")
        if len(raw) > messages.INBOUND_MAX_BYTES:
            raise PayloadTooLarge(f"the message is {len(raw)} bytes; the limit is {messages.INBOUND_MAX_BYTES}",
                                  "body")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise ValidationFailed("the message is not valid JSON", "body", code="invalid_json") from None
        if not isinstance(data, dict):
            raise ValidationFailed("the message must be a JSON object", "body")
        if data == messages.PING:
            return None
        try:
            return messages.Subscribe.model_validate(data)
        except ValidationError as exc:
            # As on the HTTP routes, the key is checked first: a caller without the stage's key learns
            # nothing about what a valid message looks like.
            key, stage_id = data.get("key"), data.get("stage")
            if not isinstance(key, str) or not key:
                raise Unauthorized("missing key: send it as `key`", "key", code="missing_key") from None
            if not isinstance(stage_id, str) or not stage_id:
                raise NotFound("no such stage", "stage", code="stage_not_found") from None
            self.stages.check_key(stage_id, key, agent_only=False)
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "body"
            raise ValidationFailed(f"{field}: {first['msg']}", field) from None

    def _refuse(self, connection_id: str, err: ApiError) -> None:
        if err.field == "Authorization":
            err.field = "key"      # the key checks speak of the HTTP header; here the key is a field
        self._send_quietly(connection_id, messages.error(err))
        try:
            self.sender.close(connection_id)
        except Exception:  # noqa: BLE001 - the page closes it too on an error
            log.warning("could not close a refused socket", exc_info=True)

    def _send_quietly(self, connection_id: str, data: bytes) -> None:
        try:
            self.sender.send(connection_id, data)
        except Gone:
            pass

    # -- a change of a stage ---------------------------------------------------------------------------
    def fan_out(self, stage: StageRecord, show: bool = True, since: str | None = None) -> FanOut:
        """Sends ``stage`` as it is now to every page subscribed to it, once: its current line, scene and
        the log entries written since version ``since`` (the version before the change).  Subscriptions
        whose key no longer opens the stage (rotated) are closed and removed; those whose socket is gone,
        removed.  ``show=False`` only does the key check (a change that shows nothing new: a rotation)."""
        subscribed = self.connections.of_stage(stage.stage_id)
        done = FanOut(subscribed=len(subscribed))
        if not subscribed:
            return done
        allowed = [c for c in subscribed if c.opens(stage)]
        for refused in (c for c in subscribed if not c.opens(stage)):
            done.refused += 1
            self._drop(refused, close=True)
        if not show or not allowed:
            return done
        shown, after = self.news(stage, since)
        data = messages.view(shown, after)
        if data is None:
            # Not even the newest entry fits: the page fetches the view itself (a GET per page).
            data, done.nudged = messages.changed(stage.stage_id, shown.version), True
        delivered = [self._deliver(c, data) for c in allowed] if self._pool is None else \
            list(self._pool.map(lambda c: self._deliver(c, data), allowed))
        done.sent, done.gone = delivered.count(True), delivered.count(False)
        return done

    def fan_out_audio(self, stage: StageRecord, before: str | None) -> FanOut:
        """Sends the lines voiced since ``before`` (the stage item's ``voiced`` before the change) to every
        page subscribed to the stage: one small ``audio`` message, no read."""
        known = {v.entry for v in voiced_from_json(before)}
        new = [(v.entry, v.audio, v.failed) for v in voiced_from_json(stage.voiced) if v.entry not in known]
        subscribed = self.connections.of_stage(stage.stage_id)
        done = FanOut(subscribed=len(subscribed))
        allowed = [c for c in subscribed if c.opens(stage)]
        if not new or not allowed:
            return done
        data = messages.audio(stage.stage_id, view_version(stage), new)
        delivered = [self._deliver(c, data) for c in allowed] if self._pool is None else \
            list(self._pool.map(lambda c: self._deliver(c, data), allowed))
        done.sent, done.gone = delivered.count(True), delivered.count(False)
        return done

    def news(self, stage: StageRecord, since: str | None) -> tuple[StageView, str | None]:
        """The view of ``stage`` with only the log entries after ``since``, and the entry they follow.

        One Query of the newest entries (a turn writes a reply and a few lines): when ``since`` is among
        them, what follows it is new; when it is not (a scene change's version names no entry, or more was
        written), the newest entries after the oldest one read; when the stage's whole log was read, all
        of it, following nothing."""
        tail = self.stages.store.recent_log(stage.stage_id, NEWS_ENTRIES + 1)
        ids = [entry.id for entry in tail]
        if stage.version in ids:
            # The log is read after the stage: entries of later changes wait for their own push, so the
            # line, the scene and the log a page is sent belong to the same change.
            tail, ids = tail[:ids.index(stage.version) + 1], ids[:ids.index(stage.version) + 1]
        if since is not None and since in ids:
            at = ids.index(since)
            return self.stages.view(stage, tail[at + 1:]), since
        if len(tail) <= NEWS_ENTRIES:
            return self.stages.view(stage, tail), None
        return self.stages.view(stage, tail[1:]), tail[0].id

    def _deliver(self, connection: Connection, data: bytes) -> bool:
        try:
            self.sender.send(connection.connection_id, data)
            return True
        except Gone:
            self._drop(connection, close=False)
            return False

    def _drop(self, connection: Connection, close: bool) -> None:
        if close:
            try:
                self.sender.close(connection.connection_id)
            except Exception:  # noqa: BLE001 - removing the subscription is what counts
                log.warning("could not close a socket", exc_info=True)
        self.connections.remove(connection.stage_id, connection.connection_id)
