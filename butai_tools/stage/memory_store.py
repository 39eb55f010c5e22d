"""An in-memory StageStore with the same guarantees as the DynamoDB one.

Used by the tests of the service and by `butai trace` and `butai lint`, which play a scenario on a stage
held in memory through the director's own path (never shipped); a single lock makes each write atomic the
way a DynamoDB transaction is.
"""
from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from chalicelib.stage.store import (
    AlreadyClaimed,
    Claim,
    DuplicateRequest,
    Guard,
    GuardFailed,
    LogRecord,
    Pending,
    ReplyRecord,
    SpeakWrite,
    StageKind,
    StageRecord,
    StaleGame,
    TurnWrite,
)
from chalicelib.stage.voices import FAILED, Voiced, voiced_from_json, voiced_json
from chalicelib.turn_record import TurnRecord, VoiceRecord


@dataclass
class _Row:
    """A stored reply and where its delivery stands (the attributes of a `pending_replies` item)."""
    reply: ReplyRecord
    claim_id: str | None = None      # the latest claim (a fetch's, or the turn that answered it)
    unread: bool = True              # until acknowledged (or answered by a turn)

    def held(self, now_ms: int) -> bool:
        return self.reply.lease_until_ms is not None and self.reply.lease_until_ms > now_ms


class MemoryStageStore:
    def __init__(self, clock: Callable[[], float] = time.time):
        self._lock = threading.Lock()
        self._clock = clock
        self.stages: dict[str, StageRecord] = {}
        self.logs: dict[str, list[LogRecord]] = {}
        self.requests: dict[tuple[str, str], tuple[str | None, dict]] = {}
        self.replies: dict[str, list[_Row]] = {}
        self.turns: dict[str, list[dict]] = {}
        self.calls: list[str] = []

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

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
            self.stages[stage_id] = replace(stage, line=write.line, version=write.entry.id,
                                            voice_wanted=write.voice_wanted or stage.voice_wanted)
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
            self.replies.setdefault(stage_id, []).append(_Row(copy.deepcopy(reply)))

    def recent_log(self, stage_id: str, limit: int) -> list[LogRecord]:
        with self._lock:
            self.calls.append("recent_log")
            entries = sorted(self.logs.get(stage_id, []), key=lambda e: e.id)
            return copy.deepcopy(entries[-limit:])

    def _rows(self, stage_id: str) -> list[_Row]:
        return sorted(self.replies.get(stage_id, []), key=lambda r: r.reply.id)

    def unread_replies(self, stage_id: str) -> list[ReplyRecord]:
        return self.pending_replies(stage_id).claimable

    def pending_replies(self, stage_id: str) -> Pending:
        with self._lock:
            self.calls.append("unread_replies")
            now = self._now_ms()
            unread = [row for row in self._rows(stage_id) if row.unread]
            return Pending([self._record(row) for row in unread if not row.held(now)],
                           [self._record(row) for row in unread if row.held(now)])

    @staticmethod
    def _record(row: _Row) -> ReplyRecord:
        return replace(copy.deepcopy(row.reply), claim_id=row.claim_id)

    def set_key_hashes(self, stage_id: str, hashes: dict[str, str]) -> None:
        with self._lock:
            self.stages[stage_id] = replace(self.stages[stage_id], **hashes)

    def claim_replies(self, stage_id: str, guard: Guard, replies: list[ReplyRecord], claim: Claim,
                      ack: list[str] | None = None) -> list[ReplyRecord]:
        with self._lock:
            self.calls.append("claim_replies")
            self._guard(stage_id, guard)
            now = self._now_ms()
            rows = {row.reply.id: row for row in self.replies.get(stage_id, [])}
            wanted = {r.id for r in replies}
            self._ack(rows, [rid for rid in ack or [] if rid not in wanted])
            claimed = []
            for seen in replies:
                row = rows.get(seen.id)
                # The same conditions as the DynamoDB claim: unread, no lease held, and claimed by nobody
                # since it was read.
                if row is None or not row.unread or row.held(now) or row.reply.deliveries != seen.deliveries:
                    continue
                row.claim_id = claim.claim_id
                row.reply = replace(row.reply, deliveries=row.reply.deliveries + 1, lease_until_ms=claim.until_ms)
                claimed.append(self._record(row))
            return claimed

    def renew_claim(self, stage_id: str, guard: Guard, replies: list[ReplyRecord], claim: Claim,
                    ack: list[str] | None = None) -> list[ReplyRecord]:
        with self._lock:
            self.calls.append("renew_claim")
            self._guard(stage_id, guard)
            rows = {row.reply.id: row for row in self.replies.get(stage_id, [])}
            wanted = {r.id for r in replies}
            self._ack(rows, [rid for rid in ack or [] if rid not in wanted])
            held = []
            for reply in replies:
                row = rows.get(reply.id)
                if row is not None and row.unread and row.claim_id == claim.claim_id:
                    row.reply = replace(row.reply, lease_until_ms=claim.until_ms)
                    held.append(self._record(row))
            return held

    def ack_replies(self, stage_id: str, guard: Guard, reply_ids: list[str]) -> list[str]:
        with self._lock:
            self.calls.append("ack_replies")
            self._guard(stage_id, guard)
            return self._ack({row.reply.id: row for row in self.replies.get(stage_id, [])}, reply_ids)

    @staticmethod
    def _ack(rows: dict[str, _Row], reply_ids: list[str]) -> list[str]:
        acked = []
        for reply_id in dict.fromkeys(reply_ids):
            row = rows.get(reply_id)
            if row is None or row.claim_id is None:
                continue            # no such reply, or nobody fetched it: nothing to acknowledge
            row.unread = False
            acked.append(reply_id)
        return acked

    def apply_turn(self, stage_id: str, write: TurnWrite) -> None:
        with self._lock:
            self.calls.append("apply_turn")
            stage = self.stages.get(stage_id)
            rows = self.replies.setdefault(stage_id, [])
            if write.reply is not None:
                existing = next((row for row in rows if row.reply.id == write.reply.id), None)
                if existing is not None:
                    if existing.claim_id == write.claim_id:
                        return      # a retry of this very turn: it was applied
                    raise RuntimeError("turn transaction cancelled: reply id already taken")
            elif write.claim:
                index = next((i for i, row in enumerate(rows) if row.reply.id == write.claim), None)
                # A turn answers only a reply nobody holds: not one an agent's fetch has under its lease.
                if index is None or not rows[index].unread or rows[index].held(self._now_ms()):
                    raise AlreadyClaimed()
            if write.guard is not None and (stage is None or getattr(stage, write.guard.attr) != write.guard.value):
                raise GuardFailed()
            if (stage is None or stage.kind != StageKind.SCENARIO or stage.game_version != write.expected_game_version
                    or (write.expected_version is not None and stage.version != write.expected_version)):
                raise StaleGame()
            if write.reply is not None:
                rows.append(_Row(copy.deepcopy(write.reply), write.claim_id or "turn", unread=False))
                if write.reply_entry is not None:
                    self.logs.setdefault(stage_id, []).append(copy.deepcopy(write.reply_entry))
            elif write.claim:
                rows[index].claim_id, rows[index].unread = write.claim_id or "turn", False
            self.stages[stage_id] = write.stage.applied_to(stage)
            self.logs.setdefault(stage_id, []).extend(copy.deepcopy(write.entries))
            if write.turn is not None:
                self.turns.setdefault(stage_id, []).append(write.turn.to_dict())

    def set_line_audio(self, stage_id: str, entry_id: str, created_at: str, text: str, audio: str | None) -> bool:
        with self._lock:
            self.calls.append("set_line_audio")
            stage = self.stages.get(stage_id)
            entry = next((e for e in self.logs.get(stage_id, []) if e.id == entry_id), None)
            if stage is None or entry is None or entry.audio:
                return False
            before = voiced_from_json(stage.voiced)
            if any(v.entry == entry_id for v in before):
                return False
            entry.audio, entry.audio_status = (audio, None) if audio else (None, FAILED)
            line = stage.line
            if audio and line.updated_at == created_at and line.text == text and not line.audio:
                line = replace(line, audio=audio)
            self.stages[stage_id] = replace(stage, line=line, voiced=voiced_json(
                [*before, Voiced(entry_id, audio or "", audio is None)]))
            return True

    def add_turn_voice(self, stage_id: str, turn_id: str, voice: VoiceRecord) -> None:
        with self._lock:
            for i, raw in enumerate(self.turns.get(stage_id, [])):
                if raw.get("id") == turn_id:
                    turn = TurnRecord.model_validate(raw)
                    turn.voices = [v for v in turn.voices if v.entry != voice.entry] + [voice]
                    self.turns[stage_id][i] = turn.to_dict()

    def recent_turns(self, stage_id: str, limit: int | None) -> list[TurnRecord]:
        with self._lock:
            turns = self.turns.get(stage_id, [])
            return [TurnRecord.model_validate(t) for t in (turns if limit is None else turns[-limit:])]
