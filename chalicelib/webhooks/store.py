"""Webhooks in DynamoDB: the registration on the stage item (`current`), deliveries in `log`.

The registration lives on the stage item, so setting it is guarded by the
agent key hash like every other agent write, and a stage deleted is a webhook
gone.  The secret is stored as is: the sender must sign with it (unlike the
stage keys, which are only ever compared, and stored as hashes).  Delivery
records (``d#<reply id>``) expire with the stage's other log items.
"""
from __future__ import annotations

import time

from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from .. import tables
from ..config import Settings
from ..stage.store import Guard, GuardFailed
from .models import DeliveryRecord, WebhookConfig

DELIVERY_PREFIX = "d#"
_de = TypeDeserializer()
_ATTRS = {"url": "webhook_url", "secret": "webhook_secret", "created_at": "webhook_created_at"}


def _plain(item: dict) -> dict:
    return {k: _de.deserialize(v) for k, v in item.items()}


class DynamoWebhookStore:
    def __init__(self, dynamodb_client, settings: Settings, clock=time.time):
        self._db = dynamodb_client
        self._current = tables.table_name(settings, "current")
        self._log = tables.table_name(settings, "log")
        self._retention = settings.retention_days * 86400
        self._clock = clock

    def get(self, stage_id: str) -> WebhookConfig | None:
        got = self._db.get_item(TableName=self._current, Key={"stage_id": {"S": stage_id}}, ConsistentRead=True,
                                ProjectionExpression="#u, #s, #c",
                                ExpressionAttributeNames={"#u": "webhook_url", "#s": "webhook_secret",
                                                          "#c": "webhook_created_at"})
        item = _plain(got.get("Item") or {})
        if not item.get("webhook_url"):
            return None
        return WebhookConfig(url=item["webhook_url"], secret=item["webhook_secret"],
                             created_at=item.get("webhook_created_at", ""))

    def set(self, stage_id: str, guard: Guard, config: WebhookConfig) -> None:
        names = {f"#{k}": v for k, v in _ATTRS.items()}
        values = {f":{k}": {"S": getattr(config, k)} for k in _ATTRS}
        self._guarded_update(stage_id, guard, "SET " + ", ".join(f"#{k} = :{k}" for k in _ATTRS), names, values)

    def delete(self, stage_id: str, guard: Guard) -> bool:
        names = {f"#{k}": v for k, v in _ATTRS.items()}
        old = self._guarded_update(stage_id, guard, "REMOVE " + ", ".join(f"#{k}" for k in _ATTRS), names, {},
                                   returns="UPDATED_OLD")
        return "webhook_url" in old

    def _guarded_update(self, stage_id, guard, expression, names, values, returns="NONE") -> dict:
        try:
            got = self._db.update_item(
                TableName=self._current, Key={"stage_id": {"S": stage_id}}, UpdateExpression=expression,
                ConditionExpression="#g = :g", ExpressionAttributeNames={**names, "#g": guard.attr},
                ExpressionAttributeValues={**values, ":g": {"S": guard.value}}, ReturnValues=returns)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise GuardFailed() from None
            raise
        return got.get("Attributes") or {}

    def record(self, stage_id: str, delivery: DeliveryRecord) -> None:
        item = {"stage_id": {"S": stage_id}, "sk": {"S": DELIVERY_PREFIX + delivery.reply_id},
                "status": {"S": delivery.status}, "attempts": {"N": str(delivery.attempts)},
                "updated_at": {"S": delivery.updated_at}}
        if delivery.last_status is not None:
            item["last_status"] = {"N": str(delivery.last_status)}
        if delivery.last_error:
            item["last_error"] = {"S": delivery.last_error[:300]}
        if self._retention:
            item["expires_at"] = {"N": str(int(self._clock()) + self._retention)}
        self._db.put_item(TableName=self._log, Item=item)

    def delivery(self, stage_id: str, reply_id: str) -> DeliveryRecord | None:
        got = self._db.get_item(TableName=self._log, ConsistentRead=True,
                                Key={"stage_id": {"S": stage_id}, "sk": {"S": DELIVERY_PREFIX + reply_id}})
        return _delivery(_plain(got["Item"])) if "Item" in got else None

    def deliveries(self, stage_id: str, limit: int) -> list[DeliveryRecord]:
        got = self._db.query(TableName=self._log, KeyConditionExpression="stage_id = :s AND begins_with(sk, :p)",
                             ExpressionAttributeValues={":s": {"S": stage_id}, ":p": {"S": DELIVERY_PREFIX}},
                             ScanIndexForward=False, Limit=limit)
        return [_delivery(_plain(item)) for item in got["Items"]]


def _delivery(plain: dict) -> DeliveryRecord:
    return DeliveryRecord(reply_id=plain["sk"][len(DELIVERY_PREFIX):], status=plain["status"],
                          attempts=int(plain["attempts"]), updated_at=plain["updated_at"],
                          last_status=int(plain["last_status"]) if "last_status" in plain else None,
                          last_error=plain.get("last_error"))
