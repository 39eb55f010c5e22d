"""One scenario turn's record: what the debug view shows and `butai stage export-eval` reads.

A leaf (it imports pydantic only), because three layers share the one definition: the interpreter
writes its part (``InterpretationRecord``), the director the rest of the ``TurnRecord`` (free talk,
notices, timings), and the stage stores it as one JSON attribute and publishes it as it is
(``GET /stages/{id}/debug``, in the OpenAPI document). The page and the evaluation tools read these
names; nothing builds or reads the record as a dict.

Stored records keep fields they do not know (a record written by a newer version still loads in an
older one during a deployment) and give every field a default where older records lack it.
"""
from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class StoredRecord(BaseModel):
    """A record the stage keeps as one JSON attribute: written with ``to_json()``, read with ``from_json()``."""
    model_config = ConfigDict(extra="allow")

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | None):
        return cls.model_validate_json(text or "{}")


class AnswerSource(StrEnum):
    """Where a free-conversation answer came from."""
    MODEL = "model"            # the generation model's own line
    KNOWLEDGE = "knowledge"    # an authored knowledge line (answers.py)
    REACTION = "reaction"      # the speaker's authored reaction to the dialogue act
    FALLBACK = "fallback"      # the speaker's fallback line, last
    # The conversation layer's answers (chalicelib/conversation):
    RECALL = "recall"          # a sentence said before (or known) brought back for a question about it
    REPLY = "reply"            # the answer to a character's own open question
    ORDER = "order"            # a menu item ordered and served
    MENU = "menu"              # what the menu holds, asked for
    CLARIFY = "clarify"        # a question back: which of two topics the player meant
    CHATTER = "chatter"        # something the character brings up when nothing else answers
    ECHO = "echo"              # what the player talked about, taken up in the character's voice
    UNSURE = "unsure"          # an honest answer to a question about the character that nothing else answers
    FORM = "form"              # an answer to a question or request of a known form (may I…?, shall I…?)


# The interpretation of a tapped destination button: no text was read.
DESTINATION_BUTTON = "destination_button"


# -- the interpreter's part ------------------------------------------------------------------------------

class CandidateRecord(StoredRecord):
    token: str
    input: str = Field(description="The player input the token stands for (意図:X, 移動:P, 離脱).")
    label: str = ""
    source: str = "input"


class NarrowedRecord(StoredRecord):
    token: str
    input: str | None = None


class NarrowingRecord(StoredRecord):
    """The candidates a narrowing step removed before the backend was asked."""
    addressee: list[NarrowedRecord] = []
    words: list[NarrowedRecord] = []


class AddresseeRecord(StoredRecord):
    character: str | None = Field(default=None, description="The character addressed (id), if any.")
    how: str | None = Field(default=None, description="head, question, phrase or given.")
    ignored: str | None = Field(default=None, description="A character named but not present.")


class BackendRecord(StoredRecord):
    """What the classifier backend was asked and answered."""
    name: str = ""
    choice: str | None = Field(default=None, description="The token the backend chose.")
    input: str | None = Field(default=None, description="The input the backend chose, before refinement.")
    answer: str | None = None
    scores: dict[str, float] = {}
    error: str | None = None
    detail: str | None = None
    prompt_tokens: int | None = None
    mode: str | None = None
    circuit: str | None = Field(default=None, description="The model server's circuit breaker after the call: "
                                                          "closed, open (the model was not asked) or half_open; "
                                                          "none when the backend calls no server.")


class AnalyserRecord(StoredRecord):
    """Which Japanese analyser read the reply, and the words it read (their normalised forms)."""
    name: str
    dictionary: str | None = None
    words: list[str] = []


class InterpretationRecord(StoredRecord):
    """How one reply was understood: candidates, narrowing, the backend's choice, refinement
    (docs/interpretation.md)."""
    text: str = ""
    analyser: AnalyserRecord | None = Field(default=None, description="The analyser that read the text; none when "
                                                                       "interpretation matched surfaces only.")
    place: str | None = Field(default=None, description="Where the player was when they said it.")
    addressee: AddresseeRecord | None = None
    candidates: list[CandidateRecord] = []
    narrowing: NarrowingRecord = Field(default_factory=NarrowingRecord)
    offered: list[str] = Field(default_factory=list, description="The tokens the backend was offered.")
    backend: BackendRecord | None = None
    rule: str | None = Field(default=None, description="The refinement rule that decided, if any.")
    input: str = Field(default="なし", description="The input the interpretation gave (意図:X, 移動:P, 離脱, なし).")
    token: str | None = None
    error: str | None = None
    examples_dropped: bool = False
    options: list[str] = Field(default_factory=list, description="A line that settled a clarifying question: "
                                                                 "the options the question named (意図:X).")
    ms: dict[str, float] = Field(default_factory=dict, description="Milliseconds per phase and in total.")

    @classmethod
    def of_button(cls, text: str, chosen: str) -> InterpretationRecord:
        """A destination button was tapped: the move is the input, nothing was interpreted."""
        return cls(text=text, rule=DESTINATION_BUTTON, input=chosen)


# -- the director's part ---------------------------------------------------------------------------------

class TalkAttempt(StoredRecord):
    """One call of the generation model: its line and why it was rejected, or its error."""
    text: str | None = None
    rejected: str | None = None
    error: str | None = None
    detail: str | None = None


class JudgmentRecord(StoredRecord):
    """How the stage judged the face of a line that came without one (a model's line)."""
    expression: str
    scores: dict[str, float] = {}
    judge: str = ""
    ms: float = 0.0
    error: str | None = None
    detail: str | None = None
    cues: list[str] = []


class FreeTalkRecord(StoredRecord):
    """A free-conversation answer: who said what, where it came from and why."""
    speaker: str
    intent: str | None = None
    text: str = ""
    source: AnswerSource
    reason: str | None = Field(default=None, description="Why no model line answered (no_model, a model error, "
                                                         "a rejected line).")
    fallback_id: str | None = None
    attempts: list[TalkAttempt] = []
    ms: float = 0.0
    mode: str | None = None
    expression: str | None = Field(default=None, description="The face the line was shown with.")
    judgment: JudgmentRecord | None = Field(default=None, description="A model's line: how its face was judged.")
    act: str | None = Field(default=None, description="An authored answer: the dialogue act recognised.")
    ref: str | None = Field(default=None, description="An authored answer: which set and line.")
    detail: dict[str, Any] | None = Field(default=None, description="What the conversation layer decided for this "
                                                                    "answer (the order's item, the options asked).")

    @model_validator(mode="before")
    @classmethod
    def _judged_face_of_older_records(cls, data: Any) -> Any:
        # Records written before the judgment had a field of its own kept it under `expression`.
        if isinstance(data, dict) and isinstance(data.get("expression"), dict):
            judged = data["expression"]
            data = {**data, "expression": judged.get("expression"), "judgment": judged}
        return data


class NoticeRecord(StoredRecord):
    """A notice the turn gave the player (exits, a refused move, already here, an ending, unplayable)."""
    kind: str
    text: str | None = None
    place: str | None = None
    destinations: list[str] | None = None
    reason: str | None = None
    exits: list[str] | None = None
    title: str | None = None
    ending: str | None = Field(default=None, description="Which ending the game reached (an ending notice).")


class VoiceSource(StrEnum):
    """Where a line's audio came from (docs/stage.md, "Voice")."""
    AHEAD = "ahead"            # rendered ahead by `butai voice render`: played with no work at turn time
    RENDERED = "rendered"      # rendered at turn time by the voice worker (a model's line, a line with slots)
    FAILED = "failed"          # the voice worker could not render it: the line shows, the page's own voice reads it
    NONE = "none"              # the stage's voice is off: the page's own voice reads it


class VoiceRecord(StoredRecord):
    """One line's voice in a turn: known ahead, or rendered after the turn was written (then filled in by the
    voice worker: how long it took, or why it failed)."""
    entry: str = Field(description="The log entry of the line.")
    character: str
    voice: str | None = None
    speed: float | None = None
    source: VoiceSource
    pending: bool = Field(default=False, description="Rendering at turn time: the audio follows on the page's push.")
    audio: str | None = None
    ms: float | None = Field(default=None, description="Rendering at turn time: milliseconds until the audio was "
                                                       "stored.")
    error: str | None = None


class TurnRecord(StoredRecord):
    """One turn as the director played it: the debug view's entry and export-eval's source."""
    id: str = Field(description="The reply the turn answered.")
    game: int = 1
    turn: int | None = Field(default=None, description="The game's turn number after this turn (0: a new game).")
    text: str
    to: str | None = None
    move: str | None = None
    place_before: str | None = None
    place_after: str | None = None
    input: str | None = Field(default=None, description="The input the rules handled (意図:X, 移動:P, 離脱, なし).")
    addressee: str | None = None
    interpretation: InterpretationRecord = Field(default_factory=InterpretationRecord)
    lines: list[str] = Field(default_factory=list, description="Ids of the scripted lines that fired.")
    free_talk: FreeTalkRecord | None = None
    notices: list[NoticeRecord] = []
    errors: list[str] = []
    ms: dict[str, float] = Field(default_factory=dict, description="Milliseconds per phase and in total.")
    voices: list[VoiceRecord] = Field(default_factory=list, description="Each character line's voice.")
    restart: bool = False
    unplayable: bool = False
    context: dict[str, Any] | None = Field(
        default=None, description="What the conversation layer decided: an order served, a clarification asked "
                                  "or settled, a reply to a character's question, a sentence recalled.")

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        for flag in ("restart", "unplayable", "context", "voices"):  # written only where they hold, as before
            if not out[flag]:
                del out[flag]
        return out
