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

class SpokenText(StoredRecord):
    """A line said that no scenario reference names (a model's line), kept for what was said."""
    turn: int
    speaker: str
    text: str


class AskedQuestion(StoredRecord):
    """The last question a character put to the player, still open."""
    ref: str = Field(description="The line that asked it (line/A04, reaction/赤尾妙子/注文#2, …).")
    speaker: str
    turn: int
    kind: str = Field(description="yes_no, wh (何, どこ …), offer (a drink or dish) or invitation (a place).")
    item: str | None = Field(default=None, description="The menu item an offer names, if one.")
    place: str | None = Field(default=None, description="The place an invitation names.")
    change: bool = Field(default=False, description="It proposes a change (明るくしたら…と思わない？): a liking "
                                                    "for things as they are answers it no.")


class OpenClarification(StoredRecord):
    """A character asked which of two topics the player meant; the next turn answers it."""
    options: list[str] = Field(description="The inputs asked about (意図:X), in the order named.")
    text: str = Field(description="The player's line that was unclear.")
    turn: int
    to: str | None = None


class ConversationMemory(StoredRecord):
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
    paid: int = Field(default=0, description="How many of `orders` are paid for: the bill is the ones after.")
    listed: list[str] = Field(default_factory=list, description="The menu items a line listed last ({menu}).")
    listed_turn: int = Field(default=0, description="The turn `listed` was said on.")
    last: SpokenText | None = Field(default=None, description="The last line a character said (any kind).")
    topics: dict[str, int] = Field(default_factory=dict,
                                   description="Per topic played (意図:X), the last turn it was played on "
                                               "(the conversation's recent topics settle an ambiguous word).")
    partner: str | None = Field(default=None, description="The character the player addressed by name last, "
                                                          "who stays addressed for a follow-up question.")
    partner_turn: int = 0
    came_from: str | None = Field(default=None, description="The place the player came from to where they are.")
    player_last: str | None = Field(default=None, description="The player's last line (a follow-up reads it too).")
    told: dict[str, int] = Field(default_factory=dict,
                                 description="What the player told of their own life (カメラマン, 釣り) → the turn "
                                             "told: said again, it is remembered, not news.")


class DirectorMemory(StoredRecord):
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
