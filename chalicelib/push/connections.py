"""Where a stage's subscribed pages are kept: items of the `log` table, `(stage_id, "c#<connection id>")`.

Beside the stage's log rather than in a table of their own: the fan-out needs every subscription of one
stage, strongly consistent (a page that has just subscribed must get the next change), which is one
Query of the stage's own partition; the `log` table already keeps short-lived records the same way
(`r#` speak answers, `d#` webhook deliveries) and already expires items by TTL on `expires_at`.  A fourth
table would add its own backups, permissions, alarms and local snapshot for nothing a prefix cannot do.

An item is removed when a send finds its socket gone (API Gateway's 410), when its key no longer opens
the stage, and in any case by the TTL: API Gateway closes every connection after two hours.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .. import tables
from ..config import Settings
from ..stage import keys
from ..stage.store import StageRecord

# API Gateway ends every connection after 2 hours; the item outlives it a little, then the TTL removes it.
CONNECTION_TTL_S = 2 * 3600 + 10 * 60


@dataclass(frozen=True)
class Connection:
    stage_id: str
    connection_id: str
    key_attr: str       # which key subscribed: "player_key_hash" or "agent_key_hash" (of StageRecord)
    key_hash: str

    def opens(self, stage: StageRecord) -> bool:
        """Whether the key this page subscribed with still opens the stage (keys can be rotated)."""
        return keys.same_hash(getattr(stage, self.key_attr, None), self.key_hash)


class DynamoConnections:
    def __init__(self, dynamodb_client, settings: Settings, clock=time.time):
        self._db = dynamodb_client
        self._table = tables.table_name(settings, "log")
        self._clock = clock

    @staticmethod
    def _key(stage_id: str, connection_id: str) -> dict:
        return {"stage_id": {"S": stage_id}, "sk": {"S": tables.LOG_CONNECTION_PREFIX + connection_id}}

    def add(self, connection: Connection) -> None:
        now = int(self._clock())
        self._db.put_item(TableName=self._table, Item={
            **self._key(connection.stage_id, connection.connection_id),
            "key_attr": {"S": connection.key_attr}, "key_hash": {"S": connection.key_hash},
            "connected_at": {"N": str(now)}, "expires_at": {"N": str(now + CONNECTION_TTL_S)}})

    def of_stage(self, stage_id: str) -> list[Connection]:
        found: list[Connection] = []
        kwargs = dict(
            TableName=self._table, ConsistentRead=True,
            KeyConditionExpression="stage_id = :s AND begins_with(sk, :p)",
            # DynamoDB deletes expired items only eventually.
            FilterExpression="expires_at > :now",
            ProjectionExpression="sk, key_attr, key_hash",
            ExpressionAttributeValues={":s": {"S": stage_id}, ":p": {"S": tables.LOG_CONNECTION_PREFIX},
                                       ":now": {"N": str(int(self._clock()))}})
        while True:
            got = self._db.query(**kwargs)
            for item in got["Items"]:
                found.append(Connection(stage_id, item["sk"]["S"][len(tables.LOG_CONNECTION_PREFIX):],
                                        item["key_attr"]["S"], item["key_hash"]["S"]))
            if "LastEvaluatedKey" not in got:
                return found
            kwargs["ExclusiveStartKey"] = got["LastEvaluatedKey"]

    def remove(self, stage_id: str, connection_id: str) -> None:
        self._db.delete_item(TableName=self._table, Key=self._key(stage_id, connection_id))
