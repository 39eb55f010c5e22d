"""The one definition of butai's DynamoDB tables.

Used by the store (key names), the local runtime and tests (create_table) and
infra/ (CloudFormation).  Logical names are the keys of ``TABLES``; physical
names come from Settings.
"""
from __future__ import annotations

from typing import Any

from chalicelib import env

from .config import Settings

# Sort-key prefixes in the log table: events, and markers that make a
# retried `speak` with the same request_id a no-op.
LOG_EVENT_PREFIX = "e#"
LOG_REQUEST_PREFIX = "r#"
# Pages subscribed to a stage's pushes (chalicelib/push/connections.py): short-lived items beside the
# stage's log, so one strongly consistent Query of the stage's partition finds them all.
LOG_CONNECTION_PREFIX = "c#"
# GSI of pending_replies holding only unread replies (the attribute is removed
# when a reply is claimed, which drops it from the index).
UNREAD_INDEX = "unread"
UNREAD_ATTR = "unread_id"

TABLES: dict[str, dict[str, Any]] = {
    "current": {
        "settings_attr": "table_current",
        "AttributeDefinitions": [{"AttributeName": "stage_id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "stage_id", "KeyType": "HASH"}],
        # Every change of a stage reaches its open pages through the table's stream (cloud only): the
        # new image is the stage to show, the old one tells a new version and a rotated key apart.
        "stream_view": "NEW_AND_OLD_IMAGES",
    },
    "log": {
        "settings_attr": "table_log",
        "AttributeDefinitions": [
            {"AttributeName": "stage_id", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": "stage_id", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "ttl_attr": "expires_at",
    },
    "pending_replies": {
        "settings_attr": "table_pending",
        "AttributeDefinitions": [
            {"AttributeName": "stage_id", "AttributeType": "S"},
            {"AttributeName": "reply_id", "AttributeType": "S"},
            {"AttributeName": UNREAD_ATTR, "AttributeType": "S"},
        ],
        "KeySchema": [
            {"AttributeName": "stage_id", "KeyType": "HASH"},
            {"AttributeName": "reply_id", "KeyType": "RANGE"},
        ],
        "GlobalSecondaryIndexes": [{
            "IndexName": UNREAD_INDEX,
            "KeySchema": [
                {"AttributeName": "stage_id", "KeyType": "HASH"},
                {"AttributeName": UNREAD_ATTR, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }],
        "ttl_attr": "expires_at",
        # New replies reach the webhook delivery function through the table's stream (cloud only).
        "stream_view": "NEW_IMAGE",
    },
}


def table_name(settings: Settings, logical: str) -> str:
    return getattr(settings, TABLES[logical]["settings_attr"])


def create_table_kwargs(settings: Settings, logical: str) -> dict[str, Any]:
    spec = TABLES[logical]
    kwargs: dict[str, Any] = {
        "TableName": table_name(settings, logical),
        "AttributeDefinitions": spec["AttributeDefinitions"],
        "KeySchema": spec["KeySchema"],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if "GlobalSecondaryIndexes" in spec:
        kwargs["GlobalSecondaryIndexes"] = spec["GlobalSecondaryIndexes"]
    return kwargs


def create_tables(dynamodb_client, settings: Settings) -> list[str]:
    """Create any missing table; returns the names created."""
    existing = set(dynamodb_client.list_tables().get("TableNames", []))
    created = []
    for logical in TABLES:
        kwargs = create_table_kwargs(settings, logical)
        if kwargs["TableName"] in existing:
            continue
        dynamodb_client.create_table(**kwargs)
        created.append(kwargs["TableName"])
    return created


# Logical ids in the CloudFormation template, and the environment variable
# through which each physical name reaches the Lambda functions.
CFN_TABLES = {
    "current": ("CurrentTable", env.TABLE_CURRENT),
    "log": ("LogTable", env.TABLE_LOG),
    "pending_replies": ("PendingRepliesTable", env.TABLE_PENDING),
}


def cloudformation_tables() -> dict[str, Any]:
    """The three tables as CloudFormation resources (on demand, point-in-time recovery, deletion protection,
    TTL)."""
    resources: dict[str, Any] = {}
    for logical, spec in TABLES.items():
        resource_id, _ = CFN_TABLES[logical]
        props: dict[str, Any] = {
            "AttributeDefinitions": spec["AttributeDefinitions"],
            "KeySchema": spec["KeySchema"],
            "BillingMode": "PAY_PER_REQUEST",
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            # A table holds every stage's game and its keys: a delete (by hand, or by a stack replacing
            # it) is refused until this is turned off (infra/teardown.sh does that when asked to delete).
            "DeletionProtectionEnabled": True,
        }
        if "GlobalSecondaryIndexes" in spec:
            props["GlobalSecondaryIndexes"] = spec["GlobalSecondaryIndexes"]
        if "stream_view" in spec:
            props["StreamSpecification"] = {"StreamViewType": spec["stream_view"]}
        if "ttl_attr" in spec:
            props["TimeToLiveSpecification"] = {"AttributeName": spec["ttl_attr"], "Enabled": True}
        resources[resource_id] = {"Type": "AWS::DynamoDB::Table", "DeletionPolicy": "Retain",
                                  "UpdateReplacePolicy": "Retain", "Properties": props}
    return resources
