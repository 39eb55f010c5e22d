"""A scenario played on a stage held in memory, through the director's own path.

`butai trace` and `butai lint` play a scenario the way a live scenario stage does: `Director.reply` over a
`StageService` (in-memory store, a catalog that gives every character its placeholder faces), so each turn
is computed by the same turn logic, built into the same conditional write (faces, effects, the debug record)
and applied by a store with the same guarantees as DynamoDB's.  What plays here cannot crash live for a
reason of the scenario's own; an unplayable turn shows as it would on the page (a fallback line, the error
in its debug record).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from butai_tools.stage.memory_store import MemoryStageStore
from chalicelib import observability
from chalicelib.director import Director, ScenarioLibrary
from chalicelib.scenario import GameRules, GameState, PlayerInput
from chalicelib.scenario.loader import CompiledScenario
from chalicelib.stage.catalog import CharacterCatalog
from chalicelib.stage.models import ReplyRequest
from chalicelib.stage.service import StageService
from chalicelib.stage.store import TurnWrite
from chalicelib.turn_record import TurnRecord

# What a reply sent with a written input says in the log (the input itself).
_ASSETS = "http://stage.invalid"


class _Bucket:
    """The two calls the scenario library makes of S3, on a dict."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put_object(self, *, Bucket: str, Key: str, Body: bytes, **_: Any) -> dict:  # noqa: N803 - boto3's names
        self.objects[Key] = Body
        return {}

    def get_object(self, *, Bucket: str, Key: str) -> dict:  # noqa: N803
        import io
        return {"Body": io.BytesIO(self.objects[Key])}


class _RecordingStore(MemoryStageStore):
    """Keeps the last turn written, with what the turn logic decided."""

    def __init__(self) -> None:
        super().__init__()
        self.last_write: TurnWrite | None = None

    def apply_turn(self, stage_id: str, write: TurnWrite) -> None:
        super().apply_turn(stage_id, write)
        self.last_write = write


@dataclass
class PlayedOnStage:
    """One turn as the stage wrote it: the turn logic's result (`played`, None for an unplayable turn), the
    debug record, the game state afterwards, and the log entries it added."""
    played: Any
    turn: TurnRecord | None
    state: GameState
    entries: list
    write: TurnWrite


class StagePlay:
    """One scenario stage in memory; `play` sends a reply (free text or a written input) through
    `Director.reply` and returns what the stage wrote."""

    def __init__(self, path: Path, scenario: CompiledScenario | None = None) -> None:
        from chalicelib.scenario import load_scenario
        compiled = scenario or load_scenario(path)
        self.rules = GameRules(compiled)
        manifests = {cid: {"id": cid, "name": c.name,
                           "expressions": {k: f"{k}.svg" for k in dict.fromkeys(["neutral", *c.expressions])}}
                     for cid, c in compiled.characters.items()}
        self.store = _RecordingStore()
        self.stages = StageService(self.store, CharacterCatalog(manifests.get), assets_base_url=_ASSETS)
        self.library = ScenarioLibrary(_Bucket(), "scenarios")
        self.director = Director(self.stages, self.library)
        key = self.library.put(path)
        with observability.no_metrics():
            created = self.director.create("play", key)
        self.stage_id, self.player_key = created.stage_id, created.player_key
        self.key = key

    @property
    def state(self) -> GameState:
        record = self.stages.read_stage(self.stage_id)
        assert record is not None
        return self.rules.restore(record.game)

    def start_entries(self) -> list:
        return list(self.store.logs.get(self.stage_id, []))

    def play(self, text: str | None = None, given: PlayerInput | None = None, *, to: str | None = None,
             move: str | None = None) -> PlayedOnStage:
        request = ReplyRequest(text=text if text is not None else str(given), to=to, move=move)
        self.store.last_write = None
        with observability.no_metrics():
            self.director.reply(self.stage_id, self.player_key, request, given=given)
        write = self.store.last_write
        assert write is not None, "the director wrote no turn"
        return PlayedOnStage(write.played, write.turn, self.state, list(write.entries), write)

    def restart(self) -> None:
        with observability.no_metrics():
            self.director.reset(self.stage_id)

    def restore(self, game: GameState) -> None:
        """Put the game back to `game` (lint explores from states it saw before), the conversation emptied."""
        from dataclasses import replace as dc_replace

        from chalicelib.stage.records import DirectorMemory
        record = self.store.stages[self.stage_id]
        memory = DirectorMemory.read(record.director)
        self.store.stages[self.stage_id] = dc_replace(record, game=game.to_json(),
                                                      director=DirectorMemory(game=memory.game).to_json(),
                                                      game_version=record.game_version + 1)


def scenario_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
