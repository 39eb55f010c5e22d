"""What a scenario stage stores besides its log: the scene and the director's memory (each turn's
record is ``turn_record.TurnRecord``, shared with the interpreter).

The store keeps each as one JSON attribute (DynamoDB has no schema to give them); these models are
the shapes on both sides of it. The director builds them, the store writes what ``to_json()`` makes,
and readers parse with ``from_json()`` — so a field renamed on one side fails in a test, not on a
player's page. The page never sees these directly: ``StageService`` turns a ``StoredScene`` into the
published ``SceneView`` (URLs instead of object keys, voices added).
"""
from __future__ import annotations

from pydantic import Field

from ..turn_record import StoredRecord

# -- the scene ------------------------------------------------------------------------------------------

class StoredCharacter(StoredRecord):
    id: str
    name: str
    expression: str
    image_key: str
    fallback_key: str
    responder: bool = False


class StoredDestination(StoredRecord):
    place: str
    name: str


class StoredNotice(StoredRecord):
    kind: str
    text: str


class StoredEnding(StoredRecord):
    title: str
    text: str = ""
    restart: str


class StoredScene(StoredRecord):
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

class DirectorMemory(StoredRecord):
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
