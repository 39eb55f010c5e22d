"""Request and response shapes of the agent protocol (also the OpenAPI source)."""
from __future__ import annotations

import functools
import unicodedata
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..faces import ExpressionSource
from ..turn_record import TurnRecord
from ..voices import SPEED_MAX, SPEED_MIN, VOICES, is_voice, unknown_voice
from .audio import AUDIO_PATH_PATTERN
from .store import Role, StageKind

SPEAK_MAX = 2000
REPLY_MAX = 1000
BODY_MAX_BYTES = 16 * 1024
LOG_LIMIT = 50
AUDIO_URL_MAX = 2048
# The expression an agent sends to let the stage judge the face (the same as sending none).
AUTO_EXPRESSION = "auto"
# Where a line's own voice stands while the stage renders it (stage/voices.py).
AudioStatus = Literal["pending", "failed"]


# What `audio` looks like as a path on the stage's origin: stage/audio.py checks it (and the listed origins).


class _Strict(BaseModel):
    # Unknown fields are rejected so an agent's typo ("expresion") is an
    # error rather than a silently ignored option.
    model_config = ConfigDict(extra="forbid", strict=True)


class SpeakRequest(_Strict):
    text: str = Field(min_length=1, max_length=SPEAK_MAX, description="The line, shown verbatim.")
    expression: str | None = Field(
        default=None, max_length=64,
        description="A hint: an expression key of the character, always obeyed when the character has it "
                    "(other keys are shown as `neutral`). Leave it out, or send `auto`, and the stage judges "
                    "the face from the line among the character's own expressions.")
    audio: str | None = Field(
        default=None, min_length=1, max_length=AUDIO_URL_MAX,
        description="Optional voice for the line: a voice uploaded to the stage's own origin (a path "
                    "`/audio/<name>.<mp3|m4a|aac|ogg|oga|opus|wav|webm>` from `butai audio upload`, or the same "
                    "as an absolute URL on that origin), or an https URL on an origin the operator listed "
                    "(BUTAI_AUDIO_ORIGINS; which origins are listed is the deployment's, so the published pattern "
                    "shows the path form only). The page plays it once the player has turned sound on.",
        json_schema_extra={"pattern": AUDIO_PATH_PATTERN})
    speaker: str | None = Field(default=None, min_length=1, max_length=64,
                                description="Display name; defaults to the character's name.")
    voice: str | None = Field(
        default=None, max_length=32,
        # the published schema names the voices, so a client (and the contract test) sends only those
        json_schema_extra={"anyOf": [{"enum": list(VOICES)}, {"type": "null"}]},
        description="The stage's voice for this line (one of " + ", ".join(VOICES) + "), when the stage "
                    "renders voices (docs/stage.md, \"Voice\"); default: the character's. Ignored when `audio` "
                    "is sent.")
    request_id: str | None = Field(default=None, min_length=1, max_length=128,
                                   pattern=r"^[A-Za-z0-9._:-]+$",
                                   description="Idempotency key: a retry with the same id is not spoken twice.")


    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return _require_visible(value)

    @field_validator("voice")
    @classmethod
    def _a_voice(cls, value: str | None) -> str | None:
        if value is not None and not is_voice(value):
            raise ValueError(unknown_voice(value))
        return value


class ReplyRequest(_Strict):
    text: str = Field(min_length=1, max_length=REPLY_MAX, description="The player's answer.")
    to: str | None = Field(default=None, min_length=1, max_length=64,
                           description="Scenario stages: the character the player addresses (tapped on the page). "
                                       "An id as the stage gave it: no control, format or private-use "
                                       "characters, no surrounding spaces.")
    move: str | None = Field(default=None, min_length=1, max_length=64,
                             description="Scenario stages: a destination button was tapped; move to this place. "
                                         "A place id as the stage gave it: no control, format or private-use "
                                         "characters, no surrounding spaces.")
    restart: bool = Field(default=False,
                          description="Scenario stages: start a new game after an ending (the page's 「もう一度」). A "
                                      "control, not a line the player said: it is not logged, and it changes nothing "
                                      "before the game has ended.")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return _require_visible(value)

    @field_validator("to", "move")
    @classmethod
    def _an_id(cls, value: str | None) -> str | None:
        return None if value is None else _require_id(value)


# Characters that show nothing: spaces (Z*), controls (Cc), invisible format characters (Cf: U+200B,
# U+2060, bidi marks …), lone surrogates (Cs) and the private-use characters of the BMP (Co, U+E000–U+F8FF).
# Unassigned code points are not among them (a newer Unicode may give them a glyph), nor are the
# supplementary private-use planes 15–16: nobody types them, and leaving them out keeps the published
# pattern one that test generators can draw from (listing 131,000 more characters made each draw slow).
# The OpenAPI document writes the same sets as patterns (``visible_pattern``, ``id_pattern``), so the
# published rule is this one.
SPACE_CATEGORIES = frozenset({"Zs", "Zl", "Zp"})
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})


def is_hidden(char: str) -> bool:
    category = unicodedata.category(char)
    return category in HIDDEN_CATEGORIES and (category != "Co" or char <= "\uffff")


def is_visible(char: str) -> bool:
    return not is_hidden(char) and unicodedata.category(char) not in SPACE_CATEGORIES


# Characters that render as nothing although their category would let them show: the Hangul fillers and
# the Braille blank (the other default-ignorable code points outside the format characters — the combining
# grapheme joiner, the variation selectors, the Khmer inherent vowels — are combining marks).  A text of
# these alone is as blank as one of spaces; so is a text of combining marks (M*) alone, with no base to
# sit on.
RENDERS_BLANK = frozenset("\u115f\u1160\u2800\u3164\uffa0")
MARK_CATEGORIES = frozenset({"Mn", "Mc", "Me"})


def is_shown(char: str) -> bool:
    """Whether ``char`` puts something on the screen by itself: what a text needs one of to be not blank."""
    return is_visible(char) and char not in RENDERS_BLANK and unicodedata.category(char) not in MARK_CATEGORIES


def _class_of(test) -> str:
    """A regex character class body (no brackets) of every code point ``test`` holds for, written so that
    Python's ``re``, ECMA-262 (JSON Schema) and Rust's regex read it alike: BMP code points as
    ``\\uXXXX``, the others as themselves.  Surrogates are left out (not every engine takes them; a JSON
    text cannot carry one unescaped, and the validators refuse them all the same)."""
    def write(cp: int) -> str:
        return f"\\u{cp:04X}" if cp <= 0xFFFF else chr(cp)
    parts, start = [], None
    for cp in range(0x110001):
        inside = cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF and test(chr(cp))
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            parts.append(write(start) if start == cp - 1 else f"{write(start)}-{write(cp - 1)}")
            start = None
    return "".join(parts)


@functools.lru_cache(maxsize=1)
def visible_pattern() -> str:
    """JSON Schema ``pattern`` of a text that is not blank: at least one character that shows."""
    return f"[^{_class_of(lambda c: not is_shown(c))}]"


@functools.lru_cache(maxsize=1)
def id_pattern() -> str:
    """JSON Schema ``pattern`` of ``to`` / ``move``: no hidden character, no space at either end."""
    edge, inner = _class_of(lambda c: not is_visible(c)), _class_of(is_hidden)
    return f"^[^{edge}]([^{inner}]*[^{edge}])?$"


def _require_visible(value: str) -> str:
    # Spaces, controls, invisible format characters (NUL, U+200B, U+2060 …), characters that render as
    # nothing (U+3164, U+2800 …) and combining marks alone say nothing.
    if not any(is_shown(c) for c in value):
        raise ValueError("must not be blank")
    return value


def _require_id(value: str) -> str:
    """A character or place id sent back by the page.  Ids never hold controls or invisible characters and
    never start or end with a space, so such a value is refused here, before anything is stored (it could
    never name a place or a character, and the director must not be handed one).  Canonically equivalent
    spellings (NFC) are the same id."""
    if any(is_hidden(c) for c in value):
        raise ValueError("must not contain control, format or private-use characters")
    if not is_visible(value[0]) or not is_visible(value[-1]):
        raise ValueError("must not start or end with a space")
    return unicodedata.normalize("NFC", value)


# Delivery to agents (docs/stage.md, "Leases and acknowledgements"): a fetch holds the replies it hands
# out for a lease; an acknowledgement ends the hold for good, an expired lease hands them out again.
# 30 s is SQS's default visibility timeout: long enough for an agent to answer a reply, short enough that
# the replies of an agent that died come back while the player is still there.
LEASE_DEFAULT_S = 30
LEASE_MIN_S = 1
LEASE_MAX_S = 900
ACK_MAX = 100
# Reply ids are ULIDs (chalicelib/ids.py).
REPLY_ID_PATTERN = r"^[0-9A-HJKMNP-TV-Z]{26}$"
ReplyId = Annotated[str, Field(pattern=REPLY_ID_PATTERN, min_length=26, max_length=26)]


class FetchRequest(_Strict):
    request_id: str | None = Field(default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$",
                                   description="Idempotency key: a retry with the same id returns the replies "
                                               "that call claimed and still holds (not acknowledged, lease "
                                               "renewed), so an answer lost on the way is not lost.")
    wait: float | None = Field(default=None, ge=0, le=20,
                               description="Long-poll: when nothing is unread, wait up to this many seconds "
                                           "(at most 20) and answer as soon as a reply arrives; `[]` when the "
                                           "wait ends. Leave it out (or 0) to answer at once.")
    ack: list[ReplyId] | None = Field(
        default=None, max_length=ACK_MAX,
        description="Acknowledges these replies (ids an earlier fetch handed out) before anything is claimed: "
                    "the acknowledgement carried by the next fetch. Acknowledged replies are never handed out "
                    "again.")
    lease: float | None = Field(
        default=None, ge=LEASE_MIN_S, le=LEASE_MAX_S,
        description=f"Seconds the replies handed out are held for this caller (default {LEASE_DEFAULT_S}). A "
                    "reply not acknowledged when its lease ends is handed out again, with `deliveries` "
                    "one higher.")


class AckRequest(_Strict):
    ids: list[ReplyId] = Field(min_length=1, max_length=ACK_MAX,
                               description="Ids of replies a fetch handed out, now handled.")


class AckResult(BaseModel):
    acked: list[str] = Field(description="The ids now acknowledged (also those acknowledged before).")
    unknown: list[str] = Field(description="Ids of no reply on this stage, or of a reply no fetch has handed "
                                           "out yet: nothing was changed for them.")


class SpeakResult(BaseModel):
    id: str
    expression: str = Field(description="The expression shown.")
    asked_expression: str = Field(description="The expression asked for (`auto` when the stage judged it).")
    expression_source: ExpressionSource = Field(
        default=ExpressionSource.AGENT, description="`agent`: the expression sent was used; `auto`: the stage judged it.")
    expression_scores: dict[str, float] | None = Field(
        default=None, description="`auto` only: the judge's score per expression key of the character.")
    audio: str | None = Field(default=None, description="The line's audio URL: the one sent, or the stage's own "
                                                         "when it was rendered ahead.")
    audio_status: AudioStatus | None = Field(
        default=None, description="`pending`: the stage renders the line's voice now; it follows on the page's "
                                  "push (docs/stage.md, \"Voice\").")
    image_url: str
    version: str
    created_at: str


class ReplyAccepted(BaseModel):
    id: str
    created_at: str
    view: StageView | None = Field(default=None, description="Scenario stages: the stage after the turn.")


class Reply(BaseModel):
    id: str = Field(description="The reply's id: the same on every delivery of it.")
    text: str
    created_at: str
    deliveries: int = Field(default=1, ge=1, description="How many fetches have handed this reply out, this one "
                                                         "included: above 1 it is a redelivery (an earlier "
                                                         "lease ended unacknowledged).")
    lease_expires_at: str | None = Field(default=None,
                                         description="When this caller's hold ends: acknowledge the reply "
                                                     "before, or it is handed out again.")


class LogEntry(BaseModel):
    id: str
    role: Role
    speaker: str | None = None
    character: str | None = None
    text: str
    expression: str | None = None
    expression_source: ExpressionSource | None = None
    expression_scores: dict[str, float] | None = None
    audio: str | None = None
    audio_status: AudioStatus | None = Field(
        default=None, description="`pending` while the stage renders the line's voice (it follows on the page's "
                                  "push), `failed` when it could not: the page's own voice reads it.")
    created_at: str
    image_url: str | None = Field(default=None, description="A character's line: the face it was said with (the "
                                                             "page shows each line of a turn with its face).")
    fallback_image_url: str | None = None


class CurrentLine(BaseModel):
    text: str
    expression: str
    asked_expression: str
    expression_source: ExpressionSource = ExpressionSource.AGENT
    audio: str | None = None
    speaker: str
    image_url: str
    fallback_image_url: str
    updated_at: str


class Voice(BaseModel):
    """How a character sounds (from the character's manifest): the page's speech synthesis reads with pitch,
    rate and lang; the stage's own voice is a Kokoro voice (`kokoro`) at `speed`."""
    pitch: float = Field(default=1.0, ge=0.0, le=2.0)
    rate: float = Field(default=1.0, ge=0.1, le=10.0)
    lang: str = Field(default="ja-JP", min_length=2, max_length=35)
    kokoro: str | None = Field(default=None, description="One of " + ", ".join(VOICES) + ".")
    speed: float | None = Field(default=None, ge=SPEED_MIN, le=SPEED_MAX)

    @field_validator("kokoro")
    @classmethod
    def _a_voice(cls, value: str | None) -> str | None:
        if value is not None and not is_voice(value):
            raise ValueError(unknown_voice(value))
        return value


class StageInfo(BaseModel):
    id: str
    name: str
    character: str
    character_name: str
    voice: Voice | None = None
    kind: StageKind = StageKind.AGENT
    title: str | None = None


class SceneCharacter(BaseModel):
    id: str
    name: str
    expression: str
    image_url: str
    fallback_image_url: str
    responder: bool = False
    voice: Voice | None = None


class Destination(BaseModel):
    place: str
    name: str


class Notice(BaseModel):
    kind: str
    text: str


class Ending(BaseModel):
    title: str
    text: str = ""
    restart: str = Field(description="What the player sends (the card's button) to start a new game.")


class SceneView(BaseModel):
    place: str
    place_name: str
    turn: int
    characters: list[SceneCharacter]
    speaking: str | None = None
    destinations: list[Destination] = []
    notices: list[Notice] = []
    ending: Ending | None = Field(default=None, description="Set when the game has ended: the ending card.")


class StageView(BaseModel):
    stage: StageInfo
    current: CurrentLine
    log: list[LogEntry]
    version: str
    scene: SceneView | None = None


class DebugTurns(BaseModel):
    turns: list[TurnRecord] = Field(description="The newest turns of a scenario stage, oldest first: the player's "
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
