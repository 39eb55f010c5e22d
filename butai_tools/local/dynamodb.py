"""Item-cost DynamoDB for the local emulator: transactions and queries.

Queries: moto answers a query by listing and sorting every item of the table
(all stages), then keeping one partition, so a poll slows down as any stage's
log grows.  Here a query whose partition key is the table's own reads only
that partition and lets moto do the rest unchanged.

Responses: moto walks every read result through its generic, shape-driven
serializer (about 0.8 ms per item), so a poll returning 50 log entries spent
40 ms there; DynamoDB's protocol is plain JSON, so reads are written with
json.dumps (anything json cannot write still takes moto's path).

Transactions:

moto backs up *every table* a transaction touches (a deep copy) and restores
the whole table when the transaction fails, so each transaction costs time in
proportion to the table (35 ms at 2,000 log items, growing without bound) and
a failure would undo other callers' writes.  The local runtime serves one
request at a time, so a transaction here can check every condition first and
only then apply its writes, keeping item-level copies for the rare rollback.
Installed only by the local runtime (`LocalAws`), never in tests that assert
moto's own behaviour.
"""
from __future__ import annotations

import copy
import inspect
import json
from typing import Any

_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table
    DynamoDBBackend.transact_write_items = _transact_write_items
    original_query = Table.query
    signature = inspect.signature(original_query)

    def query(self, *args, **kwargs):
        given = signature.bind(self, *args, **kwargs).arguments
        value = _partition_value(self, given.get("hash_key"), given.get("index_name"),
                                 given.get("hash_key_conditions"))
        if value is None or not self.range_key_attr:
            return original_query(self, *args, **kwargs)
        partition = list(self.items.get(value, {}).values())
        # The server serves one request at a time, so shadowing the method on
        # this instance for the length of one call is safe.
        self.all_items = lambda: partition
        try:
            return original_query(self, *args, **kwargs)
        finally:
            del self.all_items

    Table.query = query
    _install_fast_reads()
    _installed = True


_FAST_READS = {"GetItem", "Query", "Scan", "BatchGetItem"}


def _install_fast_reads() -> None:
    from moto.dynamodb.responses import DynamoHandler, DynamoResult
    original = DynamoHandler.serialized

    def serialized(self, action_result):
        if isinstance(action_result, DynamoResult) and self._get_action() in _FAST_READS:
            try:
                body = json.dumps(action_result.result, separators=(",", ":"))
            except (TypeError, ValueError):
                return original(self, action_result)
            headers = dict(self.response_headers)
            headers["Content-Type"] = "application/x-amz-json-1.0"
            return 200, headers, body
        return original(self, action_result)

    DynamoHandler.serialized = serialized


def _partition_value(table, hash_key, index_name, hash_key_conditions):
    """The table partition a query is confined to, when it is confined to one."""
    if index_name is None:
        return hash_key
    conditions = hash_key_conditions or []
    if len(conditions) == 1 and conditions[0][0] == table.hash_key_attr:
        return conditions[0][1]   # an index partitioned by the table's own partition key
    return None


def _key_of(backend, op_type: str, op: dict) -> tuple[Any, dict]:
    table = backend.get_table(op["TableName"])
    if op_type != "Put":
        return table, op["Key"]
    attrs = op["Item"]
    key = {table.hash_key_attr: attrs[table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = attrs[table.range_key_attr]
    return table, key


def _transact_write_items(self, transact_items: list[dict[str, Any]]) -> None:
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.exceptions import (
        MultipleTransactionsException,
        TooManyTransactionsException,
        TransactionCanceledException,
        TransactWriteSingleOpException,
    )
    if len(transact_items) > 100:
        raise TooManyTransactionsException()
    planned = []
    seen: set[tuple[str, str]] = set()
    reasons: list[tuple[Any, Any, Any]] = []
    # 1. Every condition is judged against the state before the transaction.
    for entry in transact_items:
        if len(entry) != 1:
            raise TransactWriteSingleOpException
        op_type, op = next(iter(entry.items()))
        if op_type not in ("ConditionCheck", "Put", "Delete", "Update"):
            raise ValueError("Unsupported transaction operation")
        table, key = _key_of(self, op_type, op)
        marker = (op["TableName"], str(sorted(key.items())))
        if marker in seen:
            raise MultipleTransactionsException()
        seen.add(marker)
        current = self.get_item(op["TableName"], key)
        condition = op.get("ConditionExpression")
        if condition and not get_filter_expression(condition, op.get("ExpressionAttributeNames"),
                                                   op.get("ExpressionAttributeValues")).expr(current):
            old = None
            if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
                old = current.to_json()["Attributes"]
            reasons.append(("ConditionalCheckFailed", "The conditional request failed", old))
        else:
            reasons.append((None, None, None))
        planned.append((op_type, op, key, copy.deepcopy(current.to_json()["Attributes"]) if current else None))
    if any(code for code, _, _ in reasons):
        raise TransactionCanceledException(reasons)
    # 2. Apply; undo the items already written if one write is rejected.
    done = []
    try:
        for op_type, op, key, before in planned:
            name = op["TableName"]
            if op_type == "Put":
                self.put_item(name, op["Item"])
            elif op_type == "Delete":
                self.delete_item(name, key)
            elif op_type == "Update":
                self.update_item(name, key, update_expression=op["UpdateExpression"],
                                 expression_attribute_names=op.get("ExpressionAttributeNames"),
                                 expression_attribute_values=op.get("ExpressionAttributeValues"))
            else:
                continue
            done.append((name, key, before))
    except Exception:
        for name, key, before in reversed(done):
            if before is None:
                self.delete_item(name, key)
            else:
                self.put_item(name, before)
        raise
