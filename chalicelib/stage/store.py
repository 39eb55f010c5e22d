"""Storage of stages: the interface the service needs, and its records.

Every write that belongs together is one call here, so an implementation can
make it atomic (a DynamoDB transaction) and guard it with the caller's key
hash, which also keeps the hot paths at one request.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, Protocol

from ..faces import NEUTRAL, ExpressionSource
from ..turn_record import TurnRecord, VoiceRecord


class StageKind(StrEnum):
    AGENT = "agent"          # an agent speaks through the protocol
    SCENARIO = "scenario"    # butai's director plays a scenario


class Role(StrEnum):
    """Who a log entry is from."""
    CHARACTER = "character"
    PLAYER = "player"
    NOTICE = "notice"

@dataclass(frozen=True)
class Guard:
    """The write only happens while ``attr`` of the stage item equals ``value``."""
    attr: str   # "agent_key_hash" or "player_key_hash"
    value: str


@dataclass(frozen=True)
class StoredLine:
    """The stage's current line as the stage item keeps it (one attribute per field; the page gets it as
    ``models.CurrentLine``, with URLs for the object keys).  Written whole by `speak` and by a scenario
    turn whose last entry is a character's line."""
    text: str = ""
    expression: str = NEUTRAL
    asked_expression: str = NEUTRAL
    expression_source: ExpressionSource = ExpressionSource.AGENT
    audio: str = ""
    speaker: str = ""
    image_key: str = ""
    fallback_key: str = ""
    updated_at: str = ""

    def attributes(self) -> dict[str, Any]:
        """The stage item's attributes this line sets."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_attributes(cls, item: dict[str, Any]) -> StoredLine:
        values = {k: v for k, v in item.items() if k in LINE_FIELDS}
        if "expression_source" in values:
            values["expression_source"] = ExpressionSource(values["expression_source"])
        return cls(**values)


LINE_FIELDS = frozenset(f.name for f in fields(StoredLine))


@dataclass
class StageRecord:
    stage_id: str
    name: str
    character: str
    agent_key_hash: str
    player_key_hash: str
    created_at: str
    version: str
    kind: StageKind = StageKind.AGENT
    line: StoredLine = field(default_factory=StoredLine)
    # Scenario stages only: the scenario object, its title, the game state
    # (JSON) with its version for conditional saves, the scene the page shows
    # (JSON), and the director's own memory (JSON).
    scenario: str = ""
    title: str = ""
    game: str = ""
    game_version: int = 0
    scene: str = ""
    director: str = ""
    # The id of the newest reply stored unread (set by every add_reply), and
    # the value of it that a scenario turn last answered through: while they
    # are equal a turn knows, without a query, that no reply waits unanswered.
    unread_hint: str = ""
    unread_seen: str = ""
    # The stage's own voice (stage/voices.py): the lines the last write asked the voice worker to render
    # (JSON VoiceJobs) and the newest lines it has voiced (JSON), whose change the push sends to the pages.
    voice_wanted: str = ""
    voiced: str = ""

    def attributes(self) -> dict[str, Any]:
        """The stage item: one attribute per field, the current line's fields among them."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "line"}
        return {**values, **self.line.attributes()}

    @classmethod
    def from_attributes(cls, item: dict[str, Any]) -> StageRecord:
        """The record of a stage item (attributes it does not know are left out)."""
        values = {k: v for k, v in item.items() if k in _STAGE_FIELDS}
        if "game_version" in values:
            values["game_version"] = int(values["game_version"])  # DynamoDB numbers come back as Decimal
        if "kind" in values:
            values["kind"] = StageKind(values["kind"])
        return cls(**values, line=StoredLine.from_attributes(item))


_STAGE_FIELDS = frozenset(f.name for f in fields(StageRecord)) - {"line"}


@dataclass(frozen=True)
class StageUpdate:
    """What a scenario turn changes on the stage item: always the game's version and the log's version;
    the game, the scene and the director's memory when the turn played; the current line when the turn's
    last entry is a character's line.  ``silence`` empties the bubble (text and speaker) when the player
    moved away from the last speaker without a word being said."""
    game_version: int
    version: str
    game: str | None = None
    scene: str | None = None
    director: str | None = None
    line: StoredLine | None = None
    silence: bool = False
    unread_seen: str | None = None
    voice_wanted: str | None = None     # JSON VoiceJobs: the turn's lines the voice worker is to render

    def attributes(self) -> dict[str, Any]:
        """The stage item's attributes this update sets."""
        values: dict[str, Any] = {"game_version": self.game_version, "version": self.version}
        for name in ("game", "scene", "director", "unread_seen", "voice_wanted"):
            if getattr(self, name) is not None:
                values[name] = getattr(self, name)
        if self.line is not None:
            values.update(self.line.attributes())
        elif self.silence:
            values.update(text="", speaker="")
        return values

    def applied_to(self, record: StageRecord) -> StageRecord:
        """The stage as this update leaves it."""
        values = {k: v for k, v in self.attributes().items() if k in _STAGE_FIELDS}
        line = self.line
        if line is None and self.silence:
            line = replace(record.line, text="", speaker="")
        return replace(record, **values, line=line or record.line)


@dataclass
class LogRecord:
    id: str
    role: Role
    text: str
    created_at: str
    speaker: str | None = None
    expression: str | None = None
    character: str | None = None
    expression_source: ExpressionSource | None = None
    expression_scores: dict[str, float] | None = None   # judged lines: the judge's score per key
    audio: str | None = None
    audio_status: str | None = None     # "pending" while the voice worker renders it, "failed" if it could not


@dataclass
class ReplyRecord:
    id: str
    text: str
    created_at: str
    to: str | None = None
    move: str | None = None
    restart: bool = False      # the restart control after an ending (scenario stages): claimed, never logged
    # Delivery to agents (leases, docs/stage.md): how many fetches have claimed the reply so far, and
    # until when (epoch milliseconds) the latest claim holds it; 0 and None while nobody has fetched it.
    deliveries: int = 0
    lease_until_ms: int | None = None
    claim_id: str | None = None          # the latest claim (a fetch's `req:<request_id>`, or a fresh id)


@dataclass(frozen=True)
class Claim:
    """One fetch's hold on replies: an id (``req:<request_id>`` or a fresh one) and when its lease ends."""
    claim_id: str
    until_ms: int


@dataclass
class Pending:
    """A stage's replies nobody has acknowledged yet, oldest first: those a fetch may claim now (never
    fetched, or their lease ended) and those a lease still holds."""
    claimable: list[ReplyRecord]
    held: list[ReplyRecord] = field(default_factory=list)

    @property
    def next_lease_end_ms(self) -> int | None:
        """When the earliest lease still held ends (None: none is held)."""
        return min((r.lease_until_ms for r in self.held if r.lease_until_ms is not None), default=None)


@dataclass
class SpeakWrite:
    """What one `speak` changes: the current line and one log entry."""
    line: StoredLine
    entry: LogRecord
    request_id: str | None = None
    request_fingerprint: str | None = None
    response: dict = field(default_factory=dict)
    voice_wanted: str | None = None     # JSON VoiceJobs: the line, when the voice worker is to render it


@dataclass
class TurnWrite:
    """One scenario turn, applied whole or not at all.

    ``expected_game_version`` is the version the turn was computed from: a
    turn computed from a stale game is refused.  ``claim`` is the reply the
    turn answers (claimed in the same write, so no reply is answered twice).

    A turn may also bring its reply with it (``reply`` and ``reply_entry``):
    the reply is then stored already claimed, in the same write as the turn,
    so a scenario turn is one read and one write.  ``guard`` (the player's key
    hash) and ``expected_version`` (the stage's log version the turn read)
    then make the write refuse a rotated key and a log that moved on.
    """
    expected_game_version: int
    stage: StageUpdate
    entries: list[LogRecord]
    claim: str | None = None
    claim_id: str | None = None
    turn: TurnRecord | None = None  # the turn's debug record, kept for the debug view and export-eval
    reply: ReplyRecord | None = None
    reply_entry: LogRecord | None = None
    guard: Guard | None = None
    expected_version: str | None = None
    # What the turn logic decided, as its own result (the tools that play a scenario show it); never stored.
    played: Any = None


class StoreUnavailable(Exception):
    """The store stayed busy or failing through its retries; nothing was written."""


class StaleGame(Exception):
    """The game moved on (another turn was applied first); nothing was written."""


class AlreadyClaimed(Exception):
    """The reply was already answered by someone else; nothing was written."""


class GuardFailed(Exception):
    """The stage is missing or the key hash did not match; nothing was written."""


class DuplicateRequest(Exception):
    def __init__(self, fingerprint: str | None, response: dict):
        super().__init__("request_id already used")
        self.fingerprint = fingerprint
        self.response = response


class StageStore(Protocol):
    def create_stage(self, record: StageRecord) -> None: ...
    def get_stage(self, stage_id: str) -> StageRecord | None: ...
    def list_stages(self) -> list[StageRecord]: ...
    def speak(self, stage_id: str, guard: Guard, write: SpeakWrite) -> None: ...
    def add_reply(self, stage_id: str, guard: Guard, reply: ReplyRecord, entry: LogRecord) -> None: ...
    def recent_log(self, stage_id: str, limit: int) -> list[LogRecord]: ...
    def unread_replies(self, stage_id: str) -> list[ReplyRecord]: ...
    def pending_replies(self, stage_id: str) -> Pending: ...
    def claim_replies(self, stage_id: str, guard: Guard, replies: list[ReplyRecord], claim: Claim,
                      ack: list[str] | None = None) -> list[ReplyRecord]:
        """Claims ``replies`` (as read) under ``claim``; acknowledges ``ack`` in the same write."""
        ...
    def renew_claim(self, stage_id: str, guard: Guard, replies: list[ReplyRecord], claim: Claim,
                    ack: list[str] | None = None) -> list[ReplyRecord]:
        """Renews the lease of those of ``replies`` that ``claim.claim_id`` still holds; acknowledges ``ack``."""
        ...
    def ack_replies(self, stage_id: str, guard: Guard, reply_ids: list[str]) -> list[str]: ...
    def set_key_hashes(self, stage_id: str, hashes: dict[str, str]) -> None: ...
    def apply_turn(self, stage_id: str, write: TurnWrite) -> None: ...
    def recent_turns(self, stage_id: str, limit: int | None) -> list[TurnRecord]: ...
    def set_line_audio(self, stage_id: str, entry_id: str, created_at: str, text: str, audio: str | None) -> bool:
        """The voice worker's outcome for one line (its audio object key, or None: it could not be rendered):
        on the log entry (unless it has audio already: an agent's own wins), on the current line while it is
        that entry, and in the stage item's ``voiced``.  False when the entry is gone or had audio."""
        ...
    def add_turn_voice(self, stage_id: str, turn_id: str, voice: VoiceRecord) -> None:
        """Puts a line's voice outcome in its turn's debug record (replacing the pending one)."""
        ...
