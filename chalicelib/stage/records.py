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

class DirectorMemory(_Record):
    """What the director remembers between turns that is not the game's state."""
    game: int = Field(default=1, description="Which game this is on the stage (1, then +1 per restart).")
    last_fallback: dict[str, str] = Field(
        default_factory=dict, description="Per character, the fallback line last used (never twice in a row).")

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

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        out = self.model_dump(mode="json")
        for flag in ("restart", "unplayable"):      # written only where they hold, as before
            if not out[flag]:
                del out[flag]
        return out
