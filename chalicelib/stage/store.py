"""Storage of stages: the interface the service needs, and its records.

Every write that belongs together is one call here, so an implementation can
make it atomic (a DynamoDB transaction) and guard it with the caller's key
hash, which also keeps the hot paths at one request.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from ..faces import NEUTRAL

if TYPE_CHECKING:
    from .records import TurnRecord


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


@dataclass
class StageRecord:
    stage_id: str
    name: str
    character: str
    agent_key_hash: str
    player_key_hash: str
    created_at: str
    version: str
    kind: str = StageKind.AGENT
    text: str = ""
    expression: str = NEUTRAL
    asked_expression: str = NEUTRAL
    expression_source: str = "agent"     # "agent" (sent or scripted) or "auto" (judged by the stage)
    audio: str = ""
    speaker: str = ""
    image_key: str = ""
    fallback_key: str = ""
    updated_at: str = ""
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


@dataclass
class LogRecord:
    id: str
    role: str
    text: str
    created_at: str
    speaker: str | None = None
    expression: str | None = None
    character: str | None = None
    expression_source: str | None = None
    expression_scores: dict[str, float] | None = None   # judged lines: the judge's score per key
    audio: str | None = None


@dataclass
class ReplyRecord:
    id: str
    text: str
    created_at: str
    to: str | None = None
    move: str | None = None
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
    text: str
    expression: str
    asked_expression: str
    speaker: str
    image_key: str
    fallback_key: str
    entry: LogRecord
    expression_source: str = "agent"
    audio: str = ""
    request_id: str | None = None
    request_fingerprint: str | None = None
    response: dict = field(default_factory=dict)


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
    stage: dict                 # StageRecord fields to set (game, game_version, scene, current line…)
    entries: list[LogRecord]
    claim: str | None = None
    claim_id: str | None = None
    turn: TurnRecord | None = None  # the turn's debug record, kept for the debug view and export-eval
    reply: ReplyRecord | None = None
    reply_entry: LogRecord | None = None
    guard: Guard | None = None
    expected_version: str | None = None


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
    def recent_turns(self, stage_id: str, limit: int | None) -> list[dict]: ...
