"""What a scenario stage stores besides its log: the scene, the director's memory and each turn's record.

The store keeps each as one JSON attribute (DynamoDB has no schema to give them); these models are
the shapes on both sides of it. The director builds them, the store writes what ``to_json()`` makes,
and readers parse with ``from_json()`` — so a field renamed on one side fails in a test, not on a
player's page. The page never sees these directly: ``StageService`` turns a ``StoredScene`` into the
published ``SceneView`` (URLs instead of object keys, voices added), and the debug view publishes
``TurnRecord`` as it is (``GET /stages/{id}/debug``, documented in the OpenAPI document).
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    # Unknown fields are kept rather than refused: a record written by a newer version of the
    # director must still load in an older one during a deployment.
    model_config = ConfigDict(extra="allow")

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | None):
        return cls.model_validate_json(text or "{}")


# -- the scene ------------------------------------------------------------------------------------------

class StoredCharacter(_Record):
    id: str
    name: str
    expression: str
    image_key: str
    fallback_key: str
    responder: bool = False


class StoredDestination(_Record):
    place: str
    name: str


class StoredNotice(_Record):
    kind: str
    text: str


class StoredEnding(_Record):
    title: str
    text: str = ""
    restart: str


class StoredScene(_Record):
    """The scene as the last turn left it: who is here with which face, where the player may go."""
    place: str
    place_name: str
    turn: int
    characters: list[StoredCharacter]
    speaking: str | None = None
    destinations: list[StoredDestination] = []
    notices: list[StoredNotice] = []
    ending: StoredEnding | None = None


# -- the director's memory ------------------------------------------------------------------------------

class SpokenText(_Record):
    """A line said that no scenario reference names (a model's line), kept for what was said."""
    turn: int
    speaker: str
    text: str


class AskedQuestion(_Record):
    """The last question a character put to the player, still open."""
    ref: str = Field(description="The line that asked it (line/A04, reaction/赤尾妙子/注文#2, …).")
    speaker: str
    turn: int
    kind: str = Field(description="yes_no, wh (何, どこ …), offer (a drink or dish) or invitation (a place).")
    item: str | None = Field(default=None, description="The menu item an offer names, if one.")
    place: str | None = Field(default=None, description="The place an invitation names.")


class OpenClarification(_Record):
    """A character asked which of two topics the player meant; the next turn answers it."""
    options: list[str] = Field(description="The inputs asked about (意図:X), in the order named.")
    text: str = Field(description="The player's line that was unclear.")
    turn: int
    to: str | None = None


class ConversationMemory(_Record):
    """The conversation so far, as the turn logic reads it (chalicelib/conversation)."""
    said: dict[str, list[int]] = Field(
        default_factory=dict, description="Per authored or scripted line reference, the turns it was said on "
                                          "(what was said, and how often and how recently: no repeats).")
    spoken: list[SpokenText] = Field(default_factory=list, description="The last few model lines.")
    question: AskedQuestion | None = None
    invitation: AskedQuestion | None = Field(default=None, description="The last invitation to a place, kept "
                                                                        "for a few turns after a refusal.")
    clarify: OpenClarification | None = None
    orders: list[str] = Field(default_factory=list, description="Menu items ordered, in order.")
    last: SpokenText | None = Field(default=None, description="The last line a character said (any kind).")
    topics: dict[str, int] = Field(default_factory=dict,
                                   description="Per topic played (意図:X), the last turn it was played on "
                                               "(the conversation's recent topics settle an ambiguous word).")
    partner: str | None = Field(default=None, description="The character the player addressed by name last, "
                                                          "who stays addressed for a follow-up question.")
    partner_turn: int = 0
    came_from: str | None = Field(default=None, description="The place the player came from to where they are.")
    player_last: str | None = Field(default=None, description="The player's last line (a follow-up reads it too).")


class DirectorMemory(_Record):
    """What the director remembers between turns that is not the game's state."""
    game: int = Field(default=1, description="Which game this is on the stage (1, then +1 per restart).")
    last_fallback: dict[str, str] = Field(
        default_factory=dict, description="Per character, the fallback line last used (never twice in a row).")
    conversation: ConversationMemory = Field(default_factory=ConversationMemory,
                                             description="What was said in this game (conversation context).")

    @classmethod
    def read(cls, text: str | None) -> DirectorMemory:
        """The stored memory; a missing or unreadable one is a fresh memory (the game goes on)."""
        try:
            return cls.from_json(text)
        except ValueError:
            return cls()


# -- one turn's record ----------------------------------------------------------------------------------

class TurnRecord(_Record):
    """One turn as the director played it: the debug view's entry and export-eval's source."""
    id: str = Field(description="The reply the turn answered.")
    game: int = 1
    text: str
    to: str | None = None
    move: str | None = None
    place_before: str | None = None
    place_after: str | None = None
    input: str | None = Field(default=None, description="The input the rules handled (意図:X, 移動:P, 離脱, なし).")
    addressee: str | None = None
    interpretation: dict[str, Any] = Field(
        default_factory=dict, description="The interpreter's record: candidates, narrowing, the classifier's "
                                          "choice and scores, the refinement rule (docs/interpretation.md).")
    lines: list[str] = Field(default_factory=list, description="Ids of the scripted lines that fired.")
    free_talk: dict[str, Any] | None = Field(
        default=None, description="Free conversation: speaker, intent, the answer's source (model, knowledge, "
                                  "reaction, fallback) and why, attempts, the judged face of a model's line.")
    notices: list[dict[str, Any]] = []
    errors: list[str] = []
    ms: dict[str, float] = Field(default_factory=dict, description="Milliseconds per phase and in total.")
    restart: bool = False
    unplayable: bool = False
    context: dict[str, Any] | None = Field(
        default=None, description="What the conversation layer decided: an order served, a clarification asked "
                                  "or settled, a reply to a character's question, a sentence recalled.")

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        for flag in ("restart", "unplayable", "context"):      # written only where they hold, as before
            if not out[flag]:
                del out[flag]
        return out
