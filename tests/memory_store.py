"""An in-memory StageStore with the same guarantees as the DynamoDB one.

Used by the tests of the service (never shipped); a single lock makes each write atomic the
way a DynamoDB transaction is.
"""
from __future__ import annotations

import copy
import threading
from dataclasses import replace

from chalicelib.stage.store import (
    AlreadyClaimed,
    DuplicateRequest,
    Guard,
    GuardFailed,
    LogRecord,
    ReplyRecord,
    SpeakWrite,
    StageKind,
    StageRecord,
    StaleGame,
    TurnWrite,
)
from chalicelib.turn_record import TurnRecord


class MemoryStageStore:
    def __init__(self):
        self._lock = threading.Lock()
        self.stages: dict[str, StageRecord] = {}
        self.logs: dict[str, list[LogRecord]] = {}
        self.requests: dict[tuple[str, str], tuple[str | None, dict]] = {}
        self.replies: dict[str, list[tuple[ReplyRecord, str | None]]] = {}  # (reply, claim_id)
        self.turns: dict[str, list[dict]] = {}
        self.calls: list[str] = []

    def _guard(self, stage_id: str, guard: Guard) -> StageRecord:
        stage = self.stages.get(stage_id)
        if stage is None or getattr(stage, guard.attr) != guard.value:
            raise GuardFailed()
        return stage

    def create_stage(self, record: StageRecord) -> None:
        with self._lock:
            self.calls.append("create_stage")
            if record.stage_id in self.stages:
                raise ValueError("stage exists")
            self.stages[record.stage_id] = copy.deepcopy(record)

    def get_stage(self, stage_id: str) -> StageRecord | None:
        with self._lock:
            self.calls.append("get_stage")
            found = self.stages.get(stage_id)
            return copy.deepcopy(found)

    def list_stages(self) -> list[StageRecord]:
        with self._lock:
            return sorted((copy.deepcopy(s) for s in self.stages.values()), key=lambda r: r.created_at)

    def speak(self, stage_id: str, guard: Guard, write: SpeakWrite) -> None:
        with self._lock:
            self.calls.append("speak")
            stage = self._guard(stage_id, guard)
            if write.request_id and (stage_id, write.request_id) in self.requests:
                fingerprint, response = self.requests[(stage_id, write.request_id)]
                raise DuplicateRequest(fingerprint, copy.deepcopy(response))
            self.stages[stage_id] = replace(stage, line=write.line, version=write.entry.id)
            self.logs.setdefault(stage_id, []).append(copy.deepcopy(write.entry))
            if write.request_id:
                self.requests[(stage_id, write.request_id)] = (write.request_fingerprint,
                                                               copy.deepcopy(write.response))

    def add_reply(self, stage_id: str, guard: Guard, reply: ReplyRecord, entry: LogRecord) -> None:
        with self._lock:
            self.calls.append("add_reply")
            stage = self._guard(stage_id, guard)
            self.stages[stage_id] = replace(stage, version=entry.id, unread_hint=reply.id)
            self.logs.setdefault(stage_id, []).append(copy.deepcopy(entry))
            self.replies.setdefault(stage_id, []).append((copy.deepcopy(reply), None))

    def recent_log(self, stage_id: str, limit: int) -> list[LogRecord]:
        with self._lock:
            self.calls.append("recent_log")
            entries = sorted(self.logs.get(stage_id, []), key=lambda e: e.id)
            return copy.deepcopy(entries[-limit:])

    def unread_replies(self, stage_id: str) -> list[ReplyRecord]:
        with self._lock:
            self.calls.append("unread_replies")
            return [copy.deepcopy(r) for r, claim in sorted(self.replies.get(stage_id, []),
                                                             key=lambda p: p[0].id) if claim is None]

    def set_key_hashes(self, stage_id: str, hashes: dict[str, str]) -> None:
        with self._lock:
            self.stages[stage_id] = replace(self.stages[stage_id], **hashes)

    def claimed_by(self, stage_id: str, claim_id: str) -> list[ReplyRecord]:
        with self._lock:
            return [copy.deepcopy(r) for r, claim in sorted(self.replies.get(stage_id, []), key=lambda p: p[0].id)
                    if claim == claim_id]

    def claim_replies(self, stage_id: str, guard: Guard, reply_ids: list[str], claim_id: str) -> list[str]:
        with self._lock:
            self.calls.append("claim_replies")
            self._guard(stage_id, guard)
            wanted = set(reply_ids)
            claimed = []
            rows = self.replies.get(stage_id, [])
            for i, (reply, claim) in enumerate(rows):
                if reply.id in wanted and claim is None:
                    rows[i] = (reply, claim_id)
                    claimed.append(reply.id)
            return claimed

    def apply_turn(self, stage_id: str, write: TurnWrite) -> None:
        with self._lock:
            self.calls.append("apply_turn")
            stage = self.stages.get(stage_id)
            rows = self.replies.setdefault(stage_id, [])
            if write.reply is not None:
                existing = next((claim for r, claim in rows if r.id == write.reply.id), False)
                if existing is not False:
                    if existing == write.claim_id:
                        return      # a retry of this very turn: it was applied
                    raise RuntimeError("turn transaction cancelled: reply id already taken")
            elif write.claim:
                index = next((i for i, (r, _) in enumerate(rows) if r.id == write.claim), None)
                if index is None or rows[index][1] is not None:
                    raise AlreadyClaimed()
            if write.guard is not None and (stage is None or getattr(stage, write.guard.attr) != write.guard.value):
                raise GuardFailed()
            if (stage is None or stage.kind != StageKind.SCENARIO or stage.game_version != write.expected_game_version
                    or (write.expected_version is not None and stage.version != write.expected_version)):
                raise StaleGame()
            if write.reply is not None:
                rows.append((copy.deepcopy(write.reply), write.claim_id or "turn"))
                if write.reply_entry is not None:
                    self.logs.setdefault(stage_id, []).append(copy.deepcopy(write.reply_entry))
            elif write.claim:
                rows[index] = (rows[index][0], write.claim_id or "turn")
            self.stages[stage_id] = write.stage.applied_to(stage)
            self.logs.setdefault(stage_id, []).extend(copy.deepcopy(write.entries))
            if write.turn is not None:
                self.turns.setdefault(stage_id, []).append(write.turn.to_dict())

    def recent_turns(self, stage_id: str, limit: int | None) -> list[TurnRecord]:
        with self._lock:
            turns = self.turns.get(stage_id, [])
            return [TurnRecord.model_validate(t) for t in (turns if limit is None else turns[-limit:])]
