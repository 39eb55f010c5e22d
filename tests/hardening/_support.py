"""Helpers shared by the hardening tests.

- `StageState`: the items one or more stages own in the three tables, read
  straight from moto's in-process backend (microseconds instead of three
  DynamoDB calls), checked once against the same items read through boto3 and
  replaced by the boto3 read if moto's internals ever differ.
- `error_of`: the checks every rejection must pass (JSON, `{"error": {code,
  message, field?}}`, a known code with its status).
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from chalicelib import aws, tables
from tests.conftest import call as http_call  # noqa: F401 - one socket helper for every test

# Every code the API may answer a rejection with, and its status (docs/stage.md, director.py).
ERROR_STATUS = {
    "invalid_request": 400, "invalid_json": 400, "missing_key": 401, "wrong_key": 401,
    "agent_key_required": 403, "player_key_required": 403, "stage_not_found": 404,
    "not_a_scenario_stage": 404, "request_id_reused": 409, "payload_too_large": 413,
    "unsupported_media_type": 415, "rate_limited": 429, "unavailable": 503,
}


def header(response, name: str) -> str | None:
    for key, value in (response.headers or {}).items():
        if key.lower() == name.lower():
            return value
    return None


def body_text(response) -> str:
    body = response.body
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace")
    return body or ""


def error_of(response) -> dict[str, Any]:
    """The error object of a rejection, after checking its shape."""
    assert 400 <= response.status_code < 500, (response.status_code, body_text(response)[:300])
    content_type = header(response, "Content-Type") or ""
    assert content_type.startswith("application/json"), (response.status_code, content_type, body_text(response)[:300])
    body = json.loads(body_text(response))
    assert isinstance(body, dict) and set(body) == {"error"}, body
    err = body["error"]
    assert isinstance(err, dict) and {"code", "message"} <= set(err) <= {"code", "message", "field"}, err
    assert isinstance(err["code"], str) and isinstance(err["message"], str) and err["message"], err
    assert ERROR_STATUS.get(err["code"]) == response.status_code, (response.status_code, err)
    # Every rejection of this API has one input to blame, so it names it.
    assert isinstance(err.get("field"), str) and err["field"], err
    return err


def is_butai_error(response) -> bool:
    try:
        error_of(response)
        return True
    except (AssertionError, ValueError):
        return False


class StageState:
    """`state(stage_id, …)` → {(table, stage_id): sorted item JSON} for those stages only."""

    def __init__(self, settings):
        self.settings = settings
        self.db = aws.client("dynamodb", settings)
        self.names = {logical: tables.table_name(settings, logical) for logical in tables.TABLES}
        self._fast_ok: bool | None = None

    def __call__(self, *stage_ids: str) -> dict:
        if self._fast_ok is None:
            self._fast_ok = self._check_fast(stage_ids)
        return self._fast(stage_ids) if self._fast_ok else self._slow(stage_ids)

    def _check_fast(self, stage_ids: Iterable[str]) -> bool:
        try:
            return self._fast(stage_ids) == self._slow(stage_ids)
        except Exception:  # noqa: BLE001 - moto's internals changed: use boto3
            return False

    def _fast(self, stage_ids: Iterable[str]) -> dict:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends
        from moto.dynamodb.models.dynamo_type import DynamoType
        backend = dynamodb_backends[DEFAULT_ACCOUNT_ID][self.settings.region]
        out = {}
        for logical, name in self.names.items():
            table = backend.tables[name]
            for stage_id in stage_ids:
                found = table.items.get(DynamoType({"S": stage_id}))
                if found is None:
                    items = []
                elif isinstance(found, dict):
                    items = list(found.values())
                else:
                    items = [found]
                out[(logical, stage_id)] = sorted(json.dumps(i.to_json()["Attributes"], sort_keys=True,
                                                             ensure_ascii=False) for i in items)
        return out

    def _slow(self, stage_ids: Iterable[str]) -> dict:
        out = {}
        for logical, name in self.names.items():
            for stage_id in stage_ids:
                if logical == "current":
                    got = self.db.get_item(TableName=name, Key={"stage_id": {"S": stage_id}}, ConsistentRead=True)
                    items = [got["Item"]] if "Item" in got else []
                else:
                    items = []
                    pages = self.db.get_paginator("query").paginate(
                        TableName=name, KeyConditionExpression="stage_id = :s", ConsistentRead=True,
                        ExpressionAttributeValues={":s": {"S": stage_id}})
                    for page in pages:
                        items += page["Items"]
                out[(logical, stage_id)] = sorted(json.dumps(i, sort_keys=True, ensure_ascii=False) for i in items)
        return out

    def clear_history(self, stage_id: str) -> None:
        """Deletes a stage's log entries, markers and replies (its `current` item stays).

        moto copies a whole table for every action of a transaction, so a
        long-running test keeps its stages small this way."""
        for logical in ("log", "pending_replies"):
            name = self.names[logical]
            key_names = [k["AttributeName"] for k in tables.TABLES[logical]["KeySchema"]]
            keys = []
            for page in self.db.get_paginator("query").paginate(
                    TableName=name, KeyConditionExpression="stage_id = :s",
                    ExpressionAttributeValues={":s": {"S": stage_id}}, ProjectionExpression=", ".join(key_names)):
                keys += page["Items"]
            for start in range(0, len(keys), 25):
                self.db.batch_write_item(RequestItems={name: [{"DeleteRequest": {"Key": k}}
                                                              for k in keys[start:start + 25]]})

    # -- readings of a state ------------------------------------------------
    @staticmethod
    def items(state: dict, logical: str, stage_id: str) -> list[dict]:
        return [json.loads(i) for i in state[(logical, stage_id)]]

    @classmethod
    def version(cls, state: dict, stage_id: str) -> str | None:
        current = cls.items(state, "current", stage_id)
        return current[0]["version"]["S"] if current else None

    @classmethod
    def unread(cls, state: dict, stage_id: str) -> set[str]:
        return {i["reply_id"]["S"] for i in cls.items(state, "pending_replies", stage_id)
                if tables.UNREAD_ATTR in i}

    @classmethod
    def claimable(cls, state: dict, stage_id: str, now_ms: int) -> set[str]:
        """Unread replies no lease holds at ``now_ms``: what a fetch then hands out (docs/stage.md)."""
        return {i["reply_id"]["S"] for i in cls.items(state, "pending_replies", stage_id)
                if tables.UNREAD_ATTR in i and int(i.get("lease_until", {}).get("N", 0)) <= now_ms}

    @classmethod
    def held_by(cls, state: dict, stage_id: str, claim_id: str) -> set[str]:
        """Unread replies whose latest claim is ``claim_id`` (a retried request id gets them back)."""
        return {i["reply_id"]["S"] for i in cls.items(state, "pending_replies", stage_id)
                if tables.UNREAD_ATTR in i and i.get("claim_id", {}).get("S") == claim_id}

    @staticmethod
    def without_leases(state: dict) -> dict:
        """The state with every lease end left out (a retried fetch renews its lease, nothing else)."""
        def strip(item: str) -> str:
            data = json.loads(item)
            data.pop("lease_until", None)
            return json.dumps(data, sort_keys=True, ensure_ascii=False)
        return {key: sorted(strip(i) for i in items) for key, items in state.items()}

    @staticmethod
    def events(state: dict, stage_id: str) -> int:
        marker = '"sk": {"S": "' + tables.LOG_EVENT_PREFIX   # as json.dumps writes the item
        return sum(1 for i in state[("log", stage_id)] if marker in i)


def diff(before: dict, after: dict) -> dict:
    """What changed, for assertion messages."""
    out = {}
    for key in set(before) | set(after):
        a, b = set(before.get(key, [])), set(after.get(key, []))
        if a != b:
            out[f"{key[0]}:{key[1]}"] = {"removed": sorted(a - b)[:3], "added": sorted(b - a)[:3]}
    return out
