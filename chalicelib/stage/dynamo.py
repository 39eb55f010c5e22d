"""DynamoDB implementation of StageStore (the `current`, `log` and `pending_replies` tables)."""
from __future__ import annotations

import json
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from .. import tables
from ..config import Settings
from ..faces import ExpressionSource
from ..turn_record import TurnRecord, VoiceRecord
from .store import (
    AlreadyClaimed,
    Claim,
    DuplicateRequest,
    Guard,
    GuardFailed,
    LogRecord,
    Pending,
    ReplyRecord,
    Role,
    SpeakWrite,
    StageKind,
    StageRecord,
    StaleGame,
    StoreUnavailable,
    TurnWrite,
)
from .voices import FAILED, Voiced, voiced_from_json, voiced_json

_ser = TypeSerializer()
_de = TypeDeserializer()
# DynamoDB allows 100 actions per transaction; one is the key guard.
_ACTIONS_PER_TRANSACTION = 99
_CLAIM_ATTEMPTS = 8
# Cancellation reasons that say nothing about our conditions, only that DynamoDB was busy.
_BUSY_REASONS = {"ThrottlingError", "ProvisionedThroughputExceeded", "TransactionConflict"}
_BUSY_ATTEMPTS = 5


def _item(values: dict) -> dict:
    return {k: _ser.serialize(v) for k, v in values.items() if v is not None}


def _plain(item: dict) -> dict:
    return {k: _de.deserialize(v) for k, v in item.items()}


TURN_PREFIX = "t#"
_LOG_FIELDS = {f.name for f in fields(LogRecord)}


def _reply(plain: dict) -> ReplyRecord:
    """A `pending_replies` item as a record (with where its delivery stands)."""
    lease = plain.get("lease_until")
    return ReplyRecord(id=plain["reply_id"], text=plain["text"], created_at=plain["created_at"],
                       to=plain.get("to"), move=plain.get("move"), deliveries=int(plain.get("deliveries", 0)),
                       lease_until_ms=None if lease is None else int(lease), claim_id=plain.get("claim_id"))


def _claimed(reply: ReplyRecord, claim: Claim, count: bool = True) -> ReplyRecord:
    return ReplyRecord(id=reply.id, text=reply.text, created_at=reply.created_at, to=reply.to, move=reply.move,
                       deliveries=reply.deliveries + (1 if count else 0), lease_until_ms=claim.until_ms,
                       claim_id=claim.claim_id)


@dataclass(frozen=True)
class _Update:
    """One conditional update of a `pending_replies` item, in a key-guarded transaction."""
    kind: str                      # "claim", "renew" or "ack"
    reply_id: str
    expression: str
    condition: str
    values: dict
    ours: Callable[[dict], bool] | None = None    # the item shows an earlier attempt of this very call applied it


class DynamoStageStore:
    def __init__(self, dynamodb_client, settings: Settings, clock=time.time, sleep=time.sleep):
        self._db = dynamodb_client
        self._sleep = sleep
        self._retention = settings.retention_days * 86400
        self._clock = clock
        self._current = tables.table_name(settings, "current")
        self._log = tables.table_name(settings, "log")
        self._pending = tables.table_name(settings, "pending_replies")

    # -- stages ---------------------------------------------------------
    def create_stage(self, record: StageRecord) -> None:
        self._db.put_item(TableName=self._current, Item=_item(record.attributes()),
                          ConditionExpression="attribute_not_exists(stage_id)")

    def get_stage(self, stage_id: str) -> StageRecord | None:
        got = self._db.get_item(TableName=self._current, Key={"stage_id": {"S": stage_id}},
                                ConsistentRead=True)
        if "Item" not in got:
            return None
        return StageRecord.from_attributes(_plain(got["Item"]))

    def list_stages(self) -> list[StageRecord]:
        out: list[StageRecord] = []
        for page in self._db.get_paginator("scan").paginate(TableName=self._current):
            out.extend(StageRecord.from_attributes(_plain(item)) for item in page["Items"])
        return sorted(out, key=lambda r: r.created_at)

    def set_key_hashes(self, stage_id: str, hashes: dict[str, str]) -> None:
        names = {f"#k{i}": k for i, k in enumerate(hashes)}
        values = {f":k{i}": {"S": v} for i, v in enumerate(hashes.values())}
        self._db.update_item(TableName=self._current, Key={"stage_id": {"S": stage_id}},
                             UpdateExpression="SET " + ", ".join(f"#k{i} = :k{i}" for i in range(len(hashes))),
                             ConditionExpression="attribute_exists(stage_id)",
                             ExpressionAttributeNames=names, ExpressionAttributeValues=values)

    # -- writes -----------------------------------------------------------
    def _guarded_update(self, stage_id: str, guard: Guard, sets: dict) -> dict:
        names = {"#g": guard.attr}
        values = {":g": _ser.serialize(guard.value)}
        parts = []
        for i, (k, v) in enumerate(sets.items()):
            names[f"#a{i}"] = k
            values[f":v{i}"] = _ser.serialize(v)
            parts.append(f"#a{i} = :v{i}")
        return {"Update": {
            "TableName": self._current,
            "Key": {"stage_id": {"S": stage_id}},
            "UpdateExpression": "SET " + ", ".join(parts),
            "ConditionExpression": "#g = :g",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }}

    def _expires(self) -> int | None:
        return int(self._clock()) + self._retention if self._retention else None

    def _live(self) -> tuple[str, dict]:
        """A filter that hides items past their TTL: DynamoDB deletes them only eventually."""
        return ("attribute_not_exists(expires_at) OR expires_at > :now",
                {":now": {"N": str(int(self._clock()))}})

    def _log_put(self, stage_id: str, entry: LogRecord, **extra) -> dict:
        values = {"stage_id": stage_id, "sk": tables.LOG_EVENT_PREFIX + entry.id, **asdict(entry), **extra,
                  "expires_at": self._expires()}
        if entry.expression_scores is not None:
            # DynamoDB numbers are not floats: the scores travel as one JSON string.
            values["expression_scores"] = json.dumps(entry.expression_scores)
        return {"Put": {"TableName": self._log, "Item": _item(values),
                        "ConditionExpression": "attribute_not_exists(sk)"}}

    def speak(self, stage_id: str, guard: Guard, write: SpeakWrite) -> None:
        token = secrets.token_hex(16)
        actions = [
            self._guarded_update(stage_id, guard, {**write.line.attributes(), "version": write.entry.id,
                                                   **({"voice_wanted": write.voice_wanted} if write.voice_wanted
                                                      else {})}),
            self._log_put(stage_id, write.entry, request_id=write.request_id, write_token=token),
        ]
        if write.request_id:
            actions.append({"Put": {
                "TableName": self._log,
                "Item": _item({"stage_id": stage_id, "sk": tables.LOG_REQUEST_PREFIX + write.request_id,
                               "fingerprint": write.request_fingerprint, "expires_at": self._expires(),
                               "response": json.dumps(write.response, ensure_ascii=False)}),
                "ConditionExpression": "attribute_not_exists(sk)",
            }})
        reasons = self._transact(actions, token=token)
        if reasons is None:
            return
        if reasons[0] == "ConditionalCheckFailed":
            raise GuardFailed()
        if reasons[1] == "ConditionalCheckFailed" and self._written_by(stage_id, write.entry.id, token):
            # An earlier attempt of this very call was applied (the SDK retried
            # after losing the answer): the write is done.
            return
        if write.request_id and reasons[2] == "ConditionalCheckFailed":
            marker = self._db.get_item(
                TableName=self._log, ConsistentRead=True,
                Key={"stage_id": {"S": stage_id}, "sk": {"S": tables.LOG_REQUEST_PREFIX + write.request_id}})
            plain = _plain(marker["Item"])
            raise DuplicateRequest(plain.get("fingerprint"), json.loads(plain["response"]))
        raise RuntimeError(f"speak transaction cancelled: {reasons}")

    def add_reply(self, stage_id: str, guard: Guard, reply: ReplyRecord, entry: LogRecord) -> None:
        token = secrets.token_hex(16)
        actions = [
            # unread_hint tells a scenario turn that a reply waits unanswered (see StageRecord).
            self._guarded_update(stage_id, guard, {"version": entry.id, "unread_hint": reply.id}),
            self._log_put(stage_id, entry, write_token=token),
            {"Put": {"TableName": self._pending,
                     "Item": _item({"stage_id": stage_id, "reply_id": reply.id, tables.UNREAD_ATTR: reply.id,
                                    "text": reply.text, "created_at": reply.created_at,
                                    "to": reply.to, "move": reply.move,
                                    "expires_at": self._expires()}),
                     "ConditionExpression": "attribute_not_exists(reply_id)"}},
        ]
        reasons = self._transact(actions, token=token)
        if reasons is None:
            return
        if reasons[0] == "ConditionalCheckFailed":
            raise GuardFailed()
        if reasons[1] == "ConditionalCheckFailed" and self._written_by(stage_id, entry.id, token):
            return  # an earlier attempt of this call was applied
        raise RuntimeError(f"reply transaction cancelled: {reasons}")

    def _written_by(self, stage_id: str, entry_id: str, token: str) -> bool:
        """Whether the log entry exists because this very call wrote it (same write token)."""
        got = self._db.get_item(TableName=self._log, ConsistentRead=True, ProjectionExpression="write_token",
                                Key={"stage_id": {"S": stage_id}, "sk": {"S": tables.LOG_EVENT_PREFIX + entry_id}})
        return got.get("Item", {}).get("write_token", {}).get("S") == token

    def _transact(self, actions: list[dict], token: str | None = None,
                  items: list | None = None) -> list[str | None] | None:
        """Runs one transaction; returns None on success, else each action's cancellation code.

        ``token`` (ClientRequestToken, also stored on the log entry) makes
        DynamoDB treat an SDK retry of the same call as the same transaction,
        and lets a retry that still finds its own entry know the write is
        done.  ``items`` receives, per action, the item that failed its
        condition when the action asked for it.  A transaction cancelled only
        because DynamoDB was busy or another transaction held an item is tried
        again with backoff and jitter; if it stays so, StoreUnavailable (nothing
        was written).
        """
        for attempt in range(_BUSY_ATTEMPTS):
            extra = {"ClientRequestToken": f"{token[:32]}-{attempt}"} if token else {}
            try:
                self._db.transact_write_items(TransactItems=actions, **extra)
                return None
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                    raise
                reasons = exc.response.get("CancellationReasons") or []
            codes = [r.get("Code") if r.get("Code") not in (None, "None") else None for r in reasons]
            failed = {code for code in codes if code}
            if failed and failed <= _BUSY_REASONS:
                self._sleep(min(0.4, 0.02 * 2 ** attempt) * (0.5 + random.random()))
                continue
            if items is not None:
                items.extend(_plain(r["Item"]) if r.get("Item") else None for r in reasons)
            return codes + [None] * (len(actions) - len(codes))
        raise StoreUnavailable("transaction stayed cancelled: DynamoDB busy or items in use")

    # -- reads --------------------------------------------------------------
    def recent_log(self, stage_id: str, limit: int) -> list[LogRecord]:
        live, values = self._live()
        got = self._db.query(
            TableName=self._log,
            KeyConditionExpression="stage_id = :s AND begins_with(sk, :p)", FilterExpression=live,
            ExpressionAttributeValues={":s": {"S": stage_id}, ":p": {"S": tables.LOG_EVENT_PREFIX}, **values},
            # Only what a log entry shows: less to read and to send on every poll.
            ProjectionExpression=", ".join(f"#{f}" for f in _LOG_FIELDS),
            ExpressionAttributeNames={f"#{f}": f for f in _LOG_FIELDS},
            ScanIndexForward=False, Limit=limit)
        entries = [_plain(i) for i in got["Items"]]
        entries.reverse()
        for e in entries:
            if isinstance(e.get("expression_scores"), str):
                e["expression_scores"] = json.loads(e["expression_scores"])
            e["role"] = Role(e["role"])
            if e.get("expression_source"):
                e["expression_source"] = ExpressionSource(e["expression_source"])
        return [LogRecord(**{k: v for k, v in e.items() if k in _LOG_FIELDS}) for e in entries]

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def unread_replies(self, stage_id: str) -> list[ReplyRecord]:
        return self.pending_replies(stage_id).claimable

    def pending_replies(self, stage_id: str) -> Pending:
        """The stage's unacknowledged replies (the `unread` index), split by the lease clock: one query."""
        out: list[ReplyRecord] = []
        live, values = self._live()
        kwargs = dict(TableName=self._pending, IndexName=tables.UNREAD_INDEX,
                      KeyConditionExpression="stage_id = :s", FilterExpression=live,
                      ExpressionAttributeValues={":s": {"S": stage_id}, **values})
        while True:
            got = self._db.query(**kwargs)
            out.extend(_reply(_plain(item)) for item in got["Items"])
            if "LastEvaluatedKey" not in got:
                break
            kwargs["ExclusiveStartKey"] = got["LastEvaluatedKey"]
        now = self._now_ms()
        held = [r for r in out if r.lease_until_ms is not None and r.lease_until_ms > now]
        return Pending([r for r in out if r.lease_until_ms is None or r.lease_until_ms <= now], held)

    def claim_replies(self, stage_id: str, guard: Guard, replies: list[ReplyRecord], claim: Claim,
                      ack: list[str] | None = None) -> list[ReplyRecord]:
        """Each reply is claimed only while unread, with no lease held and no other claim since it was read
        (its delivery count unchanged): of two fetches racing for it, exactly one wins.  The acknowledgements
        ride in the same transactions (one request for a fetch that acknowledges the last batch)."""
        now = self._now_ms()
        by_id = {r.id: r for r in replies}
        updates = [self._ack_update(rid) for rid in dict.fromkeys(ack or []) if rid not in by_id]
        for reply in replies:
            values = {":c": {"S": claim.claim_id}, ":until": {"N": str(claim.until_ms)}, ":now": {"N": str(now)},
                      ":one": {"N": "1"}}
            if reply.deliveries:
                values[":seen"] = {"N": str(reply.deliveries)}
            updates.append(_Update(
                "claim", reply.id, "SET claim_id = :c, lease_until = :until ADD deliveries :one",
                "attribute_exists(#u) AND (attribute_not_exists(lease_until) OR lease_until <= :now) AND "
                + ("deliveries = :seen" if reply.deliveries else "attribute_not_exists(deliveries)"), values,
                # our own earlier attempt of this very call (the SDK retried after losing the answer)
                ours=lambda item: item.get("claim_id") == claim.claim_id and
                int(item.get("lease_until", 0)) == claim.until_ms))
        done = self._apply(stage_id, guard, updates)
        return [_claimed(by_id[u.reply_id], claim) for u in done if u.kind == "claim"]

    def renew_claim(self, stage_id: str, guard: Guard, replies: list[ReplyRecord], claim: Claim,
                    ack: list[str] | None = None) -> list[ReplyRecord]:
        by_id = {r.id: r for r in replies}
        updates = [self._ack_update(rid) for rid in dict.fromkeys(ack or []) if rid not in by_id]
        updates += [_Update("renew", r.id, "SET lease_until = :until", "claim_id = :c AND attribute_exists(#u)",
                            {":c": {"S": claim.claim_id}, ":until": {"N": str(claim.until_ms)}}) for r in replies]
        done = self._apply(stage_id, guard, updates)
        return [_claimed(by_id[u.reply_id], claim, count=False) for u in done if u.kind == "renew"]

    def ack_replies(self, stage_id: str, guard: Guard, reply_ids: list[str]) -> list[str]:
        """Acknowledges replies a fetch handed out: they leave the unread index for good.  Acknowledging
        one again is a no-op that still counts as acknowledged; ids of no reply, or of one nobody fetched,
        are left out of the answer (and unchanged)."""
        done = self._apply(stage_id, guard, [self._ack_update(rid) for rid in dict.fromkeys(reply_ids)])
        return [u.reply_id for u in done]

    @staticmethod
    def _ack_update(reply_id: str) -> _Update:
        # Only a reply some fetch has claimed (a claim id is there), acknowledged or not.
        return _Update("ack", reply_id, "REMOVE #u", "attribute_exists(claim_id)", {})

    def _apply(self, stage_id: str, guard: Guard, updates: list[_Update]) -> list[_Update]:
        """Key-guarded transactions of up to 99 reply updates each.  An update whose condition fails is dropped
        (unless the item shows it was this very call's earlier attempt); those cancelled only alongside it
        are tried again.  Returns the updates applied, in order; with none to apply, only the key is checked."""
        if not updates:
            got = self._db.get_item(TableName=self._current, Key={"stage_id": {"S": stage_id}},
                                    ConsistentRead=True, ProjectionExpression="#g",
                                    ExpressionAttributeNames={"#g": guard.attr})
            if got.get("Item", {}).get(guard.attr, {}).get("S") != guard.value:
                raise GuardFailed()
            return []
        check = {"ConditionCheck": {
            "TableName": self._current, "Key": {"stage_id": {"S": stage_id}},
            "ConditionExpression": "#g = :g",
            "ExpressionAttributeNames": {"#g": guard.attr},
            "ExpressionAttributeValues": {":g": {"S": guard.value}}}}
        applied: list[_Update] = []
        for start in range(0, len(updates), _ACTIONS_PER_TRANSACTION):
            batch = updates[start:start + _ACTIONS_PER_TRANSACTION]
            for _attempt in range(_CLAIM_ATTEMPTS):
                if not batch:
                    break
                actions = [check] + [{"Update": {
                    "TableName": self._pending,
                    "Key": {"stage_id": {"S": stage_id}, "reply_id": {"S": u.reply_id}},
                    "UpdateExpression": u.expression, "ConditionExpression": u.condition,
                    "ExpressionAttributeNames": {"#u": tables.UNREAD_ATTR},
                    **({"ExpressionAttributeValues": u.values} if u.values else {}),
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}} for u in batch]
                old: list = []
                # A fresh token per call: a request_id's claim id repeats across calls, a transaction token
                # must not (DynamoDB would take a later claim for a replay of the first).
                reasons = self._transact(actions, token=secrets.token_hex(16), items=old)
                if reasons is None:
                    applied += batch
                    break
                if reasons[0] == "ConditionalCheckFailed":
                    raise GuardFailed()
                old += [None] * (len(actions) - len(old))
                retry = []
                for update, code, item in zip(batch, reasons[1:], old[1:]):
                    if code != "ConditionalCheckFailed":
                        retry.append(update)          # cancelled alongside another: try again
                    elif update.ours is not None and item and update.ours(item):
                        applied.append(update)
                batch = retry
            else:
                raise RuntimeError("could not update replies: too many concurrent conflicts")
        return applied

    # -- scenario turns ---------------------------------------------------------
    def apply_turn(self, stage_id: str, write: TurnWrite) -> None:
        token = secrets.token_hex(16)
        names, values, parts = {"#gv": "game_version", "#k": "kind"}, {
            ":gv": {"N": str(write.expected_game_version)}, ":kind": {"S": StageKind.SCENARIO.value}}, []
        for i, (k, v) in enumerate(write.stage.attributes().items()):
            names[f"#a{i}"] = k
            values[f":v{i}"] = _ser.serialize(v)
            parts.append(f"#a{i} = :v{i}")
        condition = "#gv = :gv AND #k = :kind"
        if write.guard is not None:
            names["#g"], values[":g"] = write.guard.attr, {"S": write.guard.value}
            condition += " AND #g = :g"
        if write.expected_version is not None:
            names["#ver"], values[":ver"] = "version", {"S": write.expected_version}
            condition += " AND #ver = :ver"
        actions: list[dict] = [{"Update": {
            "TableName": self._current, "Key": {"stage_id": {"S": stage_id}},
            "UpdateExpression": "SET " + ", ".join(parts),
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
            # Tells a changed key (GuardFailed) from a game that moved on (StaleGame).
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}]
        claim_id = write.claim_id or token
        if write.reply is not None:
            # The turn's own reply, stored already claimed: it never enters the unread index.
            reply = write.reply
            actions.append({"Put": {
                "TableName": self._pending,
                "Item": _item({"stage_id": stage_id, "reply_id": reply.id, "text": reply.text,
                               "created_at": reply.created_at, "to": reply.to, "move": reply.move,
                               "claim_id": claim_id, "expires_at": self._expires()}),
                "ConditionExpression": "attribute_not_exists(reply_id)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}})
            if write.reply_entry is not None:     # a control (restart) is claimed with its turn but not logged
                actions.append(self._log_put(stage_id, write.reply_entry, write_token=token))
        elif write.claim:
            # Claimed and answered at once (so also acknowledged): only a reply no agent's fetch holds.
            actions.append({"Update": {
                "TableName": self._pending,
                "Key": {"stage_id": {"S": stage_id}, "reply_id": {"S": write.claim}},
                "UpdateExpression": "REMOVE #u SET claim_id = :c",
                "ConditionExpression": "attribute_exists(#u) AND (attribute_not_exists(lease_until) OR "
                                       "lease_until <= :now)",
                "ExpressionAttributeNames": {"#u": tables.UNREAD_ATTR},
                "ExpressionAttributeValues": {":c": {"S": claim_id}, ":now": {"N": str(self._now_ms())}},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}})
        actions += [self._log_put(stage_id, entry, write_token=token) for entry in write.entries]
        if write.turn is not None:
            actions.append({"Put": {"TableName": self._log, "Item": _item({
                "stage_id": stage_id, "sk": TURN_PREFIX + write.turn.id, "expires_at": self._expires(),
                "turn": write.turn.to_json()})}})
        if len(actions) > 100:
            raise ValueError(f"a turn may write at most 100 items, this one has {len(actions)}")
        old: list = []
        reasons = self._transact(actions, token=token, items=old)
        if reasons is None:
            return
        old += [None] * (len(actions) - len(old))
        if (write.reply is not None or write.claim) and reasons[1] == "ConditionalCheckFailed":
            if old[1] and old[1].get("claim_id") == claim_id:
                return  # a retry of this very turn: it was applied
            if write.reply is not None:
                raise RuntimeError("turn transaction cancelled: reply id already taken")
            raise AlreadyClaimed()
        if reasons[0] == "ConditionalCheckFailed":
            stage = old[0]
            if write.guard is not None and (not stage or stage.get(write.guard.attr) != write.guard.value):
                raise GuardFailed()
            raise StaleGame()
        raise RuntimeError(f"turn transaction cancelled: {reasons}")

    # -- the stage's own voice (stage/voices.py) ---------------------------------------------------
    def set_line_audio(self, stage_id: str, entry_id: str, created_at: str, text: str, audio: str | None) -> bool:
        entry_key = {"stage_id": {"S": stage_id}, "sk": {"S": tables.LOG_EVENT_PREFIX + entry_id}}
        if audio:
            entry_update = {"UpdateExpression": "SET #a = :a REMOVE #st", "ExpressionAttributeValues": {":a": {"S": audio}}}
        else:
            entry_update = {"UpdateExpression": "SET #st = :f", "ExpressionAttributeValues": {":f": {"S": FAILED}}}
        for _attempt in range(_CLAIM_ATTEMPTS):
            stage = self.get_stage(stage_id)
            if stage is None:
                return False
            before = voiced_from_json(stage.voiced)
            if any(v.entry == entry_id for v in before):
                return False            # told already (a retried job)
            names = {"#vd": "voiced", "#upd": "updated_at"}
            values = {":vd": {"S": voiced_json([*before, Voiced(entry_id, audio or "", audio is None)])},
                      ":upd": {"S": stage.line.updated_at}}
            update = "SET #vd = :vd"
            if audio and stage.line.updated_at == created_at and stage.line.text == text and not stage.line.audio:
                names["#au"], values[":au"] = "audio", {"S": audio}    # the current line is still this one
                update += ", #au = :au"
            # Stages made before the voice have no `voiced`; newer ones hold "" until a line is voiced.
            condition = "#upd = :upd AND " + ("#vd = :old" if stage.voiced else "(attribute_not_exists(#vd) OR #vd = :old)")
            values[":old"] = {"S": stage.voiced}
            actions = [
                {"Update": {"TableName": self._log, "Key": entry_key,
                            "ConditionExpression": "attribute_exists(sk) AND attribute_not_exists(#a)",
                            "ExpressionAttributeNames": {"#a": "audio", "#st": "audio_status"}, **entry_update}},
                {"Update": {"TableName": self._current, "Key": {"stage_id": {"S": stage_id}},
                            "UpdateExpression": update, "ConditionExpression": condition,
                            "ExpressionAttributeNames": names, "ExpressionAttributeValues": values}},
            ]
            reasons = self._transact(actions)
            if reasons is None:
                return True
            if reasons[0] == "ConditionalCheckFailed":
                return False            # the entry is gone, or has audio of its own
            if reasons[1] != "ConditionalCheckFailed":
                raise RuntimeError(f"voice transaction cancelled: {reasons}")
            # the stage moved on while we read it: read it again
        raise StoreUnavailable("the stage kept changing while a line's voice was stored")

    def add_turn_voice(self, stage_id: str, turn_id: str, voice: VoiceRecord) -> None:
        key = {"stage_id": {"S": stage_id}, "sk": {"S": TURN_PREFIX + turn_id}}
        for _attempt in range(_CLAIM_ATTEMPTS):
            got = self._db.get_item(TableName=self._log, Key=key, ConsistentRead=True)
            if "Item" not in got:
                return
            old = _plain(got["Item"])["turn"]
            turn = TurnRecord.from_json(old)
            turn.voices = [v for v in turn.voices if v.entry != voice.entry] + [voice]
            try:
                self._db.update_item(TableName=self._log, Key=key, UpdateExpression="SET #t = :new",
                                     ConditionExpression="#t = :old", ExpressionAttributeNames={"#t": "turn"},
                                     ExpressionAttributeValues={":new": {"S": turn.to_json()}, ":old": {"S": old}})
                return
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise
        raise StoreUnavailable("a turn's record kept changing while a line's voice was noted")

    def recent_turns(self, stage_id: str, limit: int | None) -> list[TurnRecord]:
        kwargs = dict(TableName=self._log, KeyConditionExpression="stage_id = :s AND begins_with(sk, :p)",
                      ExpressionAttributeValues={":s": {"S": stage_id}, ":p": {"S": TURN_PREFIX}},
                      ScanIndexForward=False)
        turns: list[TurnRecord] = []
        while True:
            if limit is not None:
                kwargs["Limit"] = limit - len(turns)
            got = self._db.query(**kwargs)
            turns += [TurnRecord.from_json(_plain(i)["turn"]) for i in got["Items"]]
            if "LastEvaluatedKey" not in got or (limit is not None and len(turns) >= limit):
                break
            kwargs["ExclusiveStartKey"] = got["LastEvaluatedKey"]
        turns.reverse()
        return turns


def stage_from_item(item: dict) -> StageRecord:
    """A stage item as DynamoDB sends it (GetItem, a stream record's image) as a StageRecord."""
    return StageRecord.from_attributes(_plain(item))
