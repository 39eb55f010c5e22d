"""The scenario director: plays a scenario on a stage.

A player's reply on a scenario stage is stored like any reply; the director
then claims it through the same fetch-once claim, interprets it, lets the
rules decide, and writes the whole turn — the claim, the new game state, every
line in order with its speaker and expression, notices, and a debug record —
as one conditional write on the game's version.  So a retried request, a
duplicate or a concurrent Lambda can never answer a reply twice or apply two
turns on the same game state, and a failed model never loses the reply.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import ids
from .errors import NotFound, ValidationFailed
from .interpret.interpreter import Interpreter
from .scenario import ExitsNotice, GameRules, GameState, PlayerInput, load_scenario_text
from .stage.models import LOG_LIMIT, ReplyAccepted, ReplyRequest
from .stage.service import CreatedStage, StageService
from .stage.store import AlreadyClaimed, LogRecord, ReplyRecord, StageRecord, StaleGame, TurnWrite
from .talk import Talker, TalkRequest

SCENARIO_PREFIX = "scenarios/"
RECENT_LINES = 6
_TURN_ATTEMPTS = 8


@dataclass
class LoadedScenario:
    key: str
    rules: GameRules
    interpreter: Interpreter

    @property
    def compiled(self):
        return self.rules.scenario


class ScenarioLibrary:
    """Scenarios live in the bucket under content-addressed keys, so a loaded
    one never goes stale and can be cached for the life of the process."""

    def __init__(self, s3, bucket: str, backend_factory: Callable[[], Any] | None = None):
        self.s3 = s3
        self.bucket = bucket
        self.backend_factory = backend_factory
        self._cache: dict[str, LoadedScenario] = {}
        self._lock = threading.Lock()

    def put(self, path: Path) -> str:
        data = path.read_bytes()
        load_scenario_text(data.decode("utf-8"), source=path.name)  # refuse a broken scenario before upload
        key = f"{SCENARIO_PREFIX}{path.stem}-{hashlib.sha256(data).hexdigest()[:16]}.json"
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType="application/json")
        return key

    def get(self, key: str) -> LoadedScenario:
        with self._lock:
            hit = self._cache.get(key)
        if hit:
            return hit
        body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read().decode("utf-8")
        rules = GameRules(load_scenario_text(body, source=key.removeprefix(SCENARIO_PREFIX)))
        backend = self.backend_factory() if self.backend_factory else None
        loaded = LoadedScenario(key, rules, Interpreter(rules, backend))
        with self._lock:
            self._cache[key] = loaded
        return loaded


class Director:
    def __init__(self, stages: StageService, library: ScenarioLibrary, talker: Talker | None = None, *,
                 players_see_debug: bool = False, new_id: Callable[[], str] = ids.new_id):
        self.stages = stages
        self.store = stages.store
        self.catalog = stages.catalog
        self.library = library
        self.talker = talker or Talker()
        self.players_see_debug = players_see_debug
        self._new_id = new_id

    # -- stages -------------------------------------------------------------------
    def create(self, name: str, scenario_key: str) -> CreatedStage:
        loaded = self.library.get(scenario_key)
        compiled = loaded.compiled
        host = compiled.responder(compiled.start_place) or next(iter(compiled.characters))
        created = self.stages.create_stage(name, host, kind="scenario", scenario=scenario_key, title=compiled.title)
        self._begin(created.stage_id, loaded, expected_version=0, game_number=1)
        return created

    def reset(self, stage_id: str) -> None:
        record = self.store.get_stage(stage_id)
        if record is None or record.kind != "scenario":
            raise NotFound("no such scenario stage", "stage_id")
        memory = json.loads(record.director or "{}")
        self._begin(stage_id, self.library.get(record.scenario), record.game_version,
                    memory.get("game", 1) + 1)

    def _begin(self, stage_id: str, loaded: LoadedScenario, expected_version: int, game_number: int) -> None:
        step = loaded.rules.start()
        memory = {"game": game_number, "last_fallback": {}}
        record = self.store.get_stage(stage_id)
        write = self._write(record, loaded, step, state_before=loaded.rules.new_state(), talk=None,
                            memory=memory, turn=None, claim=None)
        self.store.apply_turn(stage_id, write)

    # -- turns ----------------------------------------------------------------------
    def reply(self, stage_id: str, key: str | None, request: ReplyRequest) -> ReplyAccepted:
        accepted = self.stages.reply(stage_id, key, request)
        if self.stages.stage_kind(stage_id) != "scenario":
            return accepted
        record, log = self.play(stage_id)
        return accepted.model_copy(update={"view": self.stages.view(record, log)})

    def play(self, stage_id: str) -> tuple[StageRecord, list[LogRecord]]:
        """Answers every unread reply, oldest first.

        Returns the stage as it was left and its log as this handler saw it
        (read once, before the turns, then extended with what they wrote; a
        line written meanwhile by someone else shows on the next poll).
        """
        record = self.store.get_stage(stage_id)
        pending = self.store.unread_replies(stage_id)
        log = self.store.recent_log(stage_id, LOG_LIMIT) if pending else None
        attempts = 0
        while pending and attempts < _TURN_ATTEMPTS * max(1, len(pending)):
            attempts += 1
            reply = pending[0]
            write = self.turn(record, self.library.get(record.scenario), reply, log)
            try:
                self.store.apply_turn(stage_id, write)
            except (AlreadyClaimed, StaleGame) as exc:
                if isinstance(exc, AlreadyClaimed):
                    pending.pop(0)            # another handler answered it
                # Another turn landed first: recompute on top of it.
                record = self.store.get_stage(stage_id)
                log = self.store.recent_log(stage_id, LOG_LIMIT)
                continue
            pending.pop(0)
            record = _applied(record, write)
            log = (log + write.entries)[-LOG_LIMIT:]
        if log is None:
            log = self.store.recent_log(stage_id, LOG_LIMIT)
        return record, log

    def turn(self, record: StageRecord, loaded: LoadedScenario, reply: ReplyRecord,
             log: list[LogRecord] | None = None) -> TurnWrite:
        started = time.perf_counter()
        rules = loaded.rules
        state = rules.restore(record.game)
        memory = json.loads(record.director or "{}")
        errors: list[str] = []
        to = reply.to if reply.to in loaded.compiled.characters else None
        if reply.to and to is None:
            errors.append(f"unknown addressee {reply.to!r} ignored")
        if reply.move:
            chosen, addressee = PlayerInput.move(reply.move), to
            if reply.move not in loaded.compiled.places:
                chosen = PlayerInput.none()
                errors.append(f"unknown destination {reply.move!r}")
            interpretation = {"text": reply.text, "rule": "destination_button", "input": str(chosen),
                              "candidates": [], "ms": {}}
        else:
            result = loaded.interpreter.interpret_turn(reply.text, state, to)
            chosen, addressee, interpretation = result.input, result.addressee, result.debug
            if result.error:
                errors.append(f"classifier: {result.error}")
        t = time.perf_counter()
        step = rules.handle(chosen, state, addressee)
        rules_ms = (time.perf_counter() - t) * 1000
        talk = None
        if step.free_talk is not None:
            if log is None:
                log = self.store.recent_log(record.stage_id, RECENT_LINES + 1)
            talk = self._free_talk(loaded, step, state, reply, addressee, memory, log[-(RECENT_LINES + 1):])
            if talk.source == "fallback" and talk.reason not in (None, "no_model"):
                errors.append(f"free conversation: {talk.reason}")
        turn = {
            "id": reply.id, "game": memory.get("game", 1), "text": reply.text, "to": reply.to, "move": reply.move,
            "place_before": state.place, "input": str(step.input), "addressee": addressee,
            "interpretation": interpretation,
            "lines": [line.id for line in step.lines],
            "free_talk": None if talk is None else {"speaker": step.free_talk.speaker,
                                                    "intent": step.free_talk.intent, **talk.to_dict()},
            "notices": [n.to_dict() for n in step.notices], "errors": errors,
        }
        write = self._write(record, loaded, step, state_before=state, talk=talk, memory=memory,
                            turn=turn, claim=reply.id)
        # The record is serialised when the turn is written, so the timings can still be added here.
        interpret_ms = interpretation.get("ms", {})
        turn["ms"] = {**{k: v for k, v in interpret_ms.items() if k != "total"},
                      "rules": round(rules_ms, 3), "talk": round(talk.ms, 3) if talk else 0.0,
                      "total": round((time.perf_counter() - started) * 1000, 3)}
        turn["place_after"] = step.state.place
        return write

    def _free_talk(self, loaded, step, state: GameState, reply: ReplyRecord, addressee, memory,
                   recent: list[LogRecord]):
        compiled = loaded.compiled
        speaker = compiled.characters[step.free_talk.speaker]
        lines = [(e.speaker or "主人公", e.text) for e in recent if e.role != "notice" and e.id != reply.id]
        others = [e.text for e in recent if e.role == "character" and e.character != speaker.id]
        last = next((e.text for e in reversed(recent) if e.role == "character"), None)
        talk = self.talker.say(TalkRequest(
            character=speaker, knowledge=step.free_talk.knowledge, player_text=reply.text,
            place=compiled.places[state.place].id,
            addressee=compiled.characters[addressee].name if addressee else None,
            recent=lines[-RECENT_LINES:], previous_line=last, other_lines=others,
            last_fallback=memory.get("last_fallback", {}).get(speaker.id)))
        if talk.fallback_id:
            memory.setdefault("last_fallback", {})[speaker.id] = talk.fallback_id
        return talk

    def _write(self, record: StageRecord, loaded: LoadedScenario, step, *, state_before: GameState, talk,
               memory: dict, turn: dict | None, claim: str | None) -> TurnWrite:
        compiled = loaded.compiled
        expressions = dict(state_before.expressions)
        entries: list[LogRecord] = []

        # Faces shown in the scene besides the game's own: judged ones, until a scripted line sets another.
        faces: dict[str, str] = {}

        def say(character: str, text: str, judged: str | None = None, scores: dict[str, float] | None = None) -> None:
            entry_id = self._new_id()
            entries.append(LogRecord(id=entry_id, role="character", text=text,
                                     created_at=ids.iso_from_ms(ids.id_time_ms(entry_id)),
                                     speaker=compiled.characters[character].name, character=character,
                                     expression=judged or expressions.get(character, "neutral"),
                                     expression_source="auto" if scores is not None else "agent",
                                     expression_scores=scores))

        if talk is not None:
            # A free-conversation line has no authored face: the stage judges one from its words.
            speaker = step.free_talk.speaker
            judgment = self.stages.judge_line(speaker, talk.text)
            faces[speaker] = judgment.expression
            if turn is not None and turn.get("free_talk") is not None:
                turn["free_talk"]["expression"] = judgment.to_dict()
            say(speaker, talk.text, judgment.expression, judgment.rounded_scores())
        for line in step.lines:
            for effect in line.effects:
                expressions[effect.character] = effect.key
                faces.pop(effect.character, None)
            faces.pop(line.speaker, None)        # a scripted line shows the game's face again
            say(line.speaker, line.text)
        for notice in step.notices:
            entry_id = self._new_id()
            entries.append(LogRecord(id=entry_id, role="notice", text=notice.text,
                                     created_at=ids.iso_from_ms(ids.id_time_ms(entry_id))))
        last_line = next((e for e in reversed(entries) if e.role == "character"), None)
        speaking = last_line.character if last_line else None
        scene = self._scene(loaded, step, speaking, faces)
        fields: dict[str, Any] = {"game": step.state.to_json(), "game_version": record.game_version + 1,
                                  "scene": json.dumps(scene, ensure_ascii=False),
                                  "director": json.dumps(memory, ensure_ascii=False)}
        if entries:
            fields["version"] = entries[-1].id
        if last_line is not None:
            image = self.catalog.resolve(last_line.character, last_line.expression or "neutral")
            fields.update(text=last_line.text, expression=image.expression, asked_expression=image.asked,
                          expression_source=last_line.expression_source or "agent",
                          speaker=last_line.speaker, image_key=image.image_key, fallback_key=image.fallback_key,
                          updated_at=last_line.created_at)
        elif not entries:
            fields["version"] = self._new_id()  # the scene changed (e.g. a silent move): the ETag must too
        return TurnWrite(expected_game_version=record.game_version, stage=fields, entries=entries, claim=claim,
                         claim_id=f"turn-{claim}" if claim else None, turn=turn)

    def _scene(self, loaded: LoadedScenario, step, speaking: str | None, faces: dict[str, str] | None = None) -> dict:
        compiled = loaded.compiled
        state = step.state
        place = compiled.places[state.place]
        responder = compiled.responder(place.id)
        characters = []
        for cid in place.people:
            image = self.catalog.resolve(cid, (faces or {}).get(cid) or state.expressions.get(cid, "neutral"))
            characters.append({"id": cid, "name": compiled.characters[cid].name, "expression": image.expression,
                               "image_key": image.image_key, "fallback_key": image.fallback_key,
                               "responder": cid == responder})
        destinations = []
        for notice in step.notices:
            if isinstance(notice, ExitsNotice):
                destinations = [{"place": p, "name": compiled.places[p].id} for p in notice.destinations]
        return {"place": place.id, "place_name": place.id, "turn": state.turn, "characters": characters,
                "speaking": speaking if speaking in place.people else None, "destinations": destinations,
                "notices": [{"kind": n.kind, "text": n.text} for n in step.notices]}

    # -- debug view and evaluation export -------------------------------------------
    def debug(self, stage_id: str, key: str | None, limit: int = 1) -> list[dict]:
        stage = self.stages.check_key(stage_id, key, agent_only=not self.players_see_debug)
        if stage.kind != "scenario":
            raise NotFound("the debug view belongs to scenario stages", "stage_id", code="not_a_scenario_stage")
        if not 1 <= limit <= 50:
            raise ValidationFailed("limit must be between 1 and 50", "limit")
        return self.store.recent_turns(stage_id, limit)

    def export_eval(self, stage_id: str) -> dict:
        """Every turn of the current game as an evaluation case, to review and keep."""
        record = self.store.get_stage(stage_id)
        if record is None or record.kind != "scenario":
            raise NotFound("no such scenario stage", "stage_id")
        turns = self.store.recent_turns(stage_id, None)
        cases, setup, game = [], [], None
        for turn in turns:
            if turn.get("game") != game:
                game, setup = turn.get("game"), []
            case = {"id": f"play-{turn['id'][-8:].lower()}", "setup": list(setup), "text": turn["text"],
                    "expect": turn["input"]}
            if turn.get("to"):
                case["to"] = turn["to"]
            if not turn.get("move"):
                cases.append(case)
            setup.append(turn["input"])
        return {"scenario": record.scenario.removeprefix(SCENARIO_PREFIX).rsplit("-", 1)[0] + ".json",
                "cases": cases}


def _applied(record: StageRecord, write: TurnWrite) -> StageRecord:
    from dataclasses import replace
    return replace(record, **write.stage)

