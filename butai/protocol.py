"""The stage's wire format as an agent reads it.

The agent side never imports the server: these are the client's own models of
what the API answers (its OpenAPI document, ``GET /openapi.json``, is the
contract).  They accept fields they do not know, so a newer stage never breaks
an older client; ``tests/agents/test_protocol_agrees.py`` checks that every
field and constant here matches the server's.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SPEAK_MAX = 2000                 # characters in one line
MAX_WAIT_S = 20.0                # the longest long-poll `fetch_replies` accepts
LEASE_DEFAULT_S = 30             # how long a fetch holds the replies it hands out, unless it asks otherwise
LEASE_MIN_S = 1
LEASE_MAX_S = 900
ACK_MAX = 100                    # reply ids one acknowledgement may carry
REPLY_ID_PATTERN = r"^[0-9A-HJKMNP-TV-Z]{26}$"   # reply ids are ULIDs
FALLBACK_EXPRESSION = "neutral"  # shown for a key the character has no image for
# The basic set every project-drawn character has (the stage design's §4.1).
BASIC_EXPRESSIONS = ("neutral", "smile", "troubled", "surprised", "embarrassed", "determined")

ExpressionSource = Literal["agent", "auto"]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="allow")


class Reply(_Wire):
    id: str = Field(description="The same on every delivery of the reply.")
    text: str
    created_at: str
    deliveries: int = Field(default=1, description="Above 1: handed out before (an earlier lease ended "
                                                   "unacknowledged).")
    lease_expires_at: str | None = None


class AckResult(_Wire):
    acked: list[str]
    unknown: list[str]


class SpeakResult(_Wire):
    id: str
    expression: str = Field(description="The expression shown.")
    asked_expression: str = Field(description="The expression asked for (`auto` when the stage judged it).")
    expression_source: ExpressionSource = "agent"
    expression_scores: dict[str, float] | None = None
    audio: str | None = None
    audio_status: Literal["pending", "failed"] | None = None   # pending: the stage renders the line's voice now
    image_url: str
    version: str
    created_at: str


class LogEntry(_Wire):
    id: str
    role: Literal["character", "player", "notice"]
    speaker: str | None = None
    character: str | None = None
    text: str
    expression: str | None = None
    expression_source: ExpressionSource | None = None
    expression_scores: dict[str, float] | None = None
    audio: str | None = None
    audio_status: Literal["pending", "failed"] | None = None
    created_at: str
    image_url: str | None = None
    fallback_image_url: str | None = None


class CurrentLine(_Wire):
    text: str
    expression: str
    asked_expression: str
    expression_source: ExpressionSource = "agent"
    audio: str | None = None
    speaker: str
    image_url: str
    fallback_image_url: str
    updated_at: str


class Voice(_Wire):
    pitch: float = 1.0
    rate: float = 1.0
    lang: str = "ja-JP"
    kokoro: str | None = None        # the stage's own voice for the character, and its speed
    speed: float | None = None


class StageInfo(_Wire):
    id: str
    name: str
    character: str
    character_name: str
    voice: Voice | None = None
    kind: Literal["agent", "scenario"] = "agent"
    title: str | None = None


class StageView(_Wire):
    """What the stage shows now (scenario stages add a `scene`, kept as sent)."""
    stage: StageInfo
    current: CurrentLine
    log: list[LogEntry]
    version: str


class WebhookCreated(_Wire):
    url: str
    secret: str = Field(description="The signing secret, shown only now: keep it to verify deliveries.")
    created_at: str
    signature_header: str


class WebhookDelivery(_Wire):
    reply_id: str
    status: Literal["retrying", "delivered", "failed"]
    attempts: int
    last_status: int | None = None
    last_error: str | None = None
    updated_at: str


class WebhookView(_Wire):
    url: str
    created_at: str
    deliveries: list[WebhookDelivery]


class WebhookTestResult(_Wire):
    ok: bool
    status: int | None = None
    error: str | None = None
    ms: float
