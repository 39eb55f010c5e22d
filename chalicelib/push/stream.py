"""The cloud's push fan-out: DynamoDB Streams on `current` → this function → every subscribed page.

Each record of the stream is one change of a stage item, with its new and old images.  Only the newest
record of each stage in a batch matters (a view is the whole stage as it is, with its last 50 log
entries), so a batch makes one fan-out per stage: the new image is the stage to show, no read needed.
A record whose version did not move (a webhook set, a reply marked seen) shows nothing new; one whose key
hashes changed (rotated keys) closes the pages subscribed with the old key.

A stage whose fan-out failed (storage trouble) is reported as a batch item failure, so Lambda retries
it: a page gets a view again at worst, which it ignores (same version).  The writer never waits for any
of this: the stream is read after its transaction committed, by another function.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from ..stage.dynamo import stage_from_item
from ..stage.store import StageRecord
from .service import PushService

log = logging.getLogger("butai.push")
_KEYS = ("agent_key_hash", "player_key_hash")


@dataclass
class Change:
    """A stage's changes in one batch: its newest image, the version before the first of them, whether
    the version moved, whether a key changed, and the newest record's sequence number (a retry's start)."""
    stage: StageRecord
    since: str | None
    moved: bool
    rotated: bool
    sequence: str
    voiced_before: str | None = None     # the lines voiced before the first change (stage/voices.py)
    voiced: bool = False                 # the voice worker stored a line's audio



def changes(records: list[dict]) -> dict[str, Change]:
    found: dict[str, Change] = {}
    for record in records:
        data = record.get("dynamodb") or {}
        new = data.get("NewImage")
        if record.get("eventName") not in ("INSERT", "MODIFY") or not new:
            continue
        old = data.get("OldImage") or {}
        stage = stage_from_item(new)
        moved = old.get("version") != new.get("version")
        rotated = any(old.get(k) != new.get(k) for k in _KEYS) if old else False
        voiced = old.get("voiced") != new.get("voiced")
        before = found.get(stage.stage_id)
        since = (old.get("version") or {}).get("S") if before is None else before.since
        voiced_before = (old.get("voiced") or {}).get("S") if before is None else before.voiced_before
        if before is not None:
            moved, rotated, voiced = moved or before.moved, rotated or before.rotated, voiced or before.voiced
        found[stage.stage_id] = Change(stage, since, moved, rotated, str(data.get("SequenceNumber", "")),
                                       voiced_before, voiced)
    return found


def handle(event: dict, service: PushService) -> dict:
    failures = []
    for stage_id, change in changes(event.get("Records") or []).items():
        if not change.moved and not change.rotated and not change.voiced:
            continue
        try:
            if change.moved or change.rotated:
                service.fan_out(change.stage, show=change.moved, since=change.since)
            if change.voiced:
                service.fan_out_audio(change.stage, change.voiced_before)
        except Exception:  # noqa: BLE001 - storage trouble: let Lambda retry this stage's change
            log.exception("push fan-out for %s failed", stage_id)
            failures.append({"itemIdentifier": change.sequence})
    return {"batchItemFailures": failures}


def handler(event, context):  # noqa: ARG001 - Lambda's signature
    from .lambda_handlers import service
    return handle(event, service())
