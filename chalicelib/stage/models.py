"""Request and response shapes of the agent protocol (also the OpenAPI source)."""
from __future__ import annotations

import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SPEAK_MAX = 2000
REPLY_MAX = 1000
BODY_MAX_BYTES = 16 * 1024
LOG_LIMIT = 50


class _Strict(BaseModel):
    # Unknown fields are rejected so an agent's typo ("expresion") is an
    # error rather than a silently ignored option.
    model_config = ConfigDict(extra="forbid", strict=True)


class SpeakRequest(_Strict):
    text: str = Field(min_length=1, max_length=SPEAK_MAX, description="The line, shown verbatim.")
    expression: str = Field(default="neutral", max_length=64,
                            description="Expression key; unknown keys are shown as `neutral`.")
    speaker: str | None = Field(default=None, min_length=1, max_length=64,
                                description="Display name; defaults to the character's name.")
    request_id: str | None = Field(default=None, min_length=1, max_length=128,
                                   pattern=r"^[A-Za-z0-9._:-]+$",
                                   description="Idempotency key: a retry with the same id is not spoken twice.")


    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return _require_visible(value)


class ReplyRequest(_Strict):
    text: str = Field(min_length=1, max_length=REPLY_MAX, description="The player's answer.")
    to: str | None = Field(default=None, min_length=1, max_length=64,
                           description="Scenario stages: the character the player addresses (tapped on the page).")
    move: str | None = Field(default=None, min_length=1, max_length=64,
                             description="Scenario stages: a destination button was tapped; move to this place.")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return _require_visible(value)


def _require_visible(value: str) -> str:
    # Spaces, controls and invisible format characters (NUL, U+200B, U+2060 …) alone say nothing.
    if not any(unicodedata.category(c)[0] not in ("Z", "C") for c in value):
        raise ValueError("must not be blank")
    return value


class FetchRequest(_Strict):
    request_id: str | None = Field(default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$",
                                   description="Idempotency key: a retry with the same id returns the replies "
                                               "that call claimed, so an answer lost on the way is not lost.")
    wait: float | None = Field(default=None, ge=0, le=20,
                               description="Long-poll: when nothing is unread, wait up to this many seconds "
                                           "(at most 20) and answer as soon as a reply arrives; `[]` when the "
                                           "wait ends. Leave it out (or 0) to answer at once.")


class SpeakResult(BaseModel):
    id: str
    expression: str = Field(description="The expression shown.")
    asked_expression: str = Field(description="The expression asked for.")
    image_url: str
    version: str
    created_at: str


class ReplyAccepted(BaseModel):
    id: str
    created_at: str
    view: "StageView | None" = Field(default=None, description="Scenario stages: the stage after the turn.")


class Reply(BaseModel):
    id: str
    text: str
    created_at: str


class LogEntry(BaseModel):
    id: str
    role: Literal["character", "player", "notice"]
    speaker: str | None = None
    character: str | None = None
    text: str
    expression: str | None = None
    created_at: str


class CurrentLine(BaseModel):
    text: str
    expression: str
    asked_expression: str
    speaker: str
    image_url: str
    fallback_image_url: str
    updated_at: str


class StageInfo(BaseModel):
    id: str
    name: str
    character: str
    character_name: str
    kind: Literal["agent", "scenario"] = "agent"
    title: str | None = None


class SceneCharacter(BaseModel):
    id: str
    name: str
    expression: str
    image_url: str
    fallback_image_url: str
    responder: bool = False


class Destination(BaseModel):
    place: str
    name: str


class Notice(BaseModel):
    kind: str
    text: str


class SceneView(BaseModel):
    place: str
    place_name: str
    turn: int
    characters: list[SceneCharacter]
    speaking: str | None = None
    destinations: list[Destination] = []
    notices: list[Notice] = []


class StageView(BaseModel):
    stage: StageInfo
    current: CurrentLine
    log: list[LogEntry]
    version: str
    scene: SceneView | None = None


class DebugTurns(BaseModel):
    turns: list[dict] = Field(description="The newest turns of a scenario stage, oldest first: the player's "
                                          "text, candidates and tokens, narrowing, the classifier's choice and "
                                          "scores, the refinement rule, the final input, fired line ids, free "
                                          "conversation or fallback and why, errors, milliseconds per phase.")


ReplyAccepted.model_rebuild()


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail
