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
import logging
import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from . import ids
from .answers import Answer, Answerer
from .errors import NotFound, ValidationFailed
from .http import transient
from .interpret.interpreter import Interpreter
from .scenario import EndingNotice, ExitsNotice, GameRules, GameState, PlayerInput, load_scenario_text
from .stage.models import LOG_LIMIT, ReplyAccepted, ReplyRequest
from .stage.service import CreatedStage, StageService
from .stage.store import AlreadyClaimed, LogRecord, ReplyRecord, StageRecord, StaleGame, TurnWrite
from .talk import Talker, TalkRequest, TalkResult

SCENARIO_PREFIX = "scenarios/"
# Shown to the player when a reply cannot be played at all (the debug view says why).
UNPLAYABLE_NOTICE = "うまく受け取れませんでした。言い方を変えて、もう一度どうぞ。"
RECENT_LINES = 6
_TURN_ATTEMPTS = 8
log_errors = logging.getLogger("butai.director")
# After an ending, the card's button (or the player typing it) starts a new game.
RESTART_TEXT = "もう一度"
_RESTART = re.compile(r"^\s*(?:もう一度|もういちど|もう一回|もういっかい|最初から|はじめから|初めから|リスタート|restart)\s*[。！!]*\s*$",
                      re.IGNORECASE)


@dataclass
class LoadedScenario:
    key: str
    rules: GameRules
    interpreter: Interpreter
    answerer: Answerer = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.answerer is None:
            self.answerer = Answerer(self.rules, self.interpreter.names)

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
        try:
            if self.stages.stage_kind(stage_id) != "scenario":
                return accepted
            record, log = self.play(stage_id)
        except Exception:  # noqa: BLE001 - the reply is stored: say so, never a 5xx after a write
            # Only storage can fail here (a turn that cannot be played is answered with a notice, see
            # play()).  The reply stays unread and the next reply's turn answers it first, so the
            # player is told the truth (202: stored) and nothing is lost; the page polls on.
            log_errors.exception("the turn after reply %s was not played; it stays unread", accepted.id)
            return accepted
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
            try:
                write = self.turn(record, self.library.get(record.scenario), reply, log)
            except Exception as exc:  # noqa: BLE001 - see _unplayable
                if transient(exc):
                    raise
                write = self._unplayable(record, reply, exc)
            try:
                try:
                    self.store.apply_turn(stage_id, write)
                except (AlreadyClaimed, StaleGame):
                    raise
                except Exception as exc:  # noqa: BLE001 - e.g. an item over DynamoDB's size limit
                    if transient(exc) or write.turn is None or write.turn.get("unplayable"):
                        raise
                    write = self._unplayable(record, reply, exc)
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

    def _unplayable(self, record: StageRecord, reply: ReplyRecord, exc: Exception) -> TurnWrite:
        """A reply that cannot be played, for whatever reason (a stored value the rules refuse, a bug, a
        turn too large to write), is answered all the same: claimed, with a notice to the player and the
        error in the turn's debug record, the game left as it was.  Otherwise the director would retry
        it on every turn and the stage would be stuck behind it for good."""
        log_errors.exception("reply %s cannot be played; answered with a notice", reply.id)
        memory = json.loads(record.director or "{}") if _is_json_object(record.director) else {}
        entry_id = self._new_id()
        notice = LogRecord(id=entry_id, role="notice", text=UNPLAYABLE_NOTICE,
                           created_at=ids.iso_from_ms(ids.id_time_ms(entry_id)))
        turn = {"id": reply.id, "game": memory.get("game", 1), "text": reply.text, "to": reply.to,
                "move": reply.move, "input": None, "addressee": None, "interpretation": {}, "lines": [],
                "free_talk": None, "notices": [{"kind": "unplayable", "text": UNPLAYABLE_NOTICE}],
                "errors": [f"unplayable: {type(exc).__name__}: {str(exc)[:300]}"], "unplayable": True,
                "ms": {}}
        return TurnWrite(expected_game_version=record.game_version,
                         stage={"game_version": record.game_version + 1, "version": entry_id},
                         entries=[notice], claim=reply.id, claim_id=f"turn-{reply.id}", turn=turn)

    def turn(self, record: StageRecord, loaded: LoadedScenario, reply: ReplyRecord,
             log: list[LogRecord] | None = None) -> TurnWrite:
        started = time.perf_counter()
        rules = loaded.rules
        state = rules.restore(record.game)
        memory = json.loads(record.director or "{}")
        if state.ended and not reply.move and _RESTART.match(reply.text):
            return self._restart(record, loaded, reply, memory)
        errors: list[str] = []
        to = reply.to if reply.to in loaded.compiled.characters else None
        if reply.to and to is None:
            errors.append(f"unknown addressee {reply.to!r} ignored")
        if reply.move:
            addressee = to
            if reply.move in loaded.compiled.places:
                chosen = PlayerInput.move(reply.move)
            else:
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
            if self.talker.generator is not None:
                if log is None:
                    log = self.store.recent_log(record.stage_id, RECENT_LINES + 1)
                talk = self._free_talk(loaded, step, state, reply, addressee, memory, log[-(RECENT_LINES + 1):])
                if talk.source == "fallback" and talk.reason not in (None, "no_model"):
                    errors.append(f"free conversation: {talk.reason}")
            if talk is None or talk.source != "model":
                # No model, or it failed: the most specific authored line answers.
                step, talk = self._authored_answer(loaded, step, state, reply, talk)
        turn = {
            "id": reply.id, "game": memory.get("game", 1), "text": reply.text, "to": reply.to, "move": reply.move,
            "place_before": state.place, "input": str(step.input), "addressee": addressee,
            "interpretation": interpretation,
            "lines": [line.id for line in step.lines],
            "free_talk": None if talk is None else {"speaker": step.free_talk.speaker,
                                                    "intent": step.free_talk.intent, **talk.to_dict()},
            "notices": [n.to_dict() for n in step.notices], "errors": errors,
        }
        if talk is not None and talk.source != "model":
            turn["free_talk"]["speaker"] = talk.speaker
        write = self._write(record, loaded, step, state_before=state, talk=talk, memory=memory,
                            turn=turn, claim=reply.id)
        # The record is serialised when the turn is written, so the timings can still be added here.
        interpret_ms = interpretation.get("ms", {})
        turn["ms"] = {**{k: v for k, v in interpret_ms.items() if k != "total"},
                      "rules": round(rules_ms, 3), "talk": round(talk.ms, 3) if talk else 0.0,
                      "total": round((time.perf_counter() - started) * 1000, 3)}
        turn["place_after"] = step.state.place
        return write

    def _authored_answer(self, loaded: LoadedScenario, step, state: GameState, reply: ReplyRecord,
                         model_talk: TalkResult | None):
        """The step with an authored answer (knowledge line, reaction or
        fallback) to its free-conversation request, and that answer."""
        t = time.perf_counter()
        answer: Answer = loaded.answerer.answer(step.free_talk, state, reply.text, turn=step.state.turn)
        expressions = dict(step.state.expressions)
        # The answer comes before the step's lines: a later line's effect on the same face wins.
        if not any(e.character == answer.speaker for line in step.lines for e in line.effects):
            expressions[answer.speaker] = answer.expression
        new_state = step.state.with_said(variation=answer.variation, expressions=expressions)
        talk = TalkResult(answer.text, answer.source,
                          reason=model_talk.reason if model_talk is not None else "no_model",
                          fallback_id=answer.ref if answer.source == "fallback" else None,
                          attempts=model_talk.attempts if model_talk is not None else [],
                          ms=(model_talk.ms if model_talk is not None else 0.0) + (time.perf_counter() - t) * 1000,
                          speaker=answer.speaker, expression=answer.expression, act=answer.act, ref=answer.ref)
        step = replace(step, free_talk=replace(step.free_talk, speaker=answer.speaker), state=new_state)
        return step, talk

    def _restart(self, record: StageRecord, loaded: LoadedScenario, reply: ReplyRecord, memory: dict) -> TurnWrite:
        """A new game after an ending, answered as the reply's turn (claimed once, like any turn)."""
        step = loaded.rules.start()
        memory = {**memory, "game": memory.get("game", 1) + 1}
        turn = {"id": reply.id, "game": memory["game"], "text": reply.text, "to": reply.to, "move": reply.move,
                "restart": True, "place_before": None, "input": "開始", "addressee": None, "interpretation": {},
                "lines": [line.id for line in step.lines], "free_talk": None, "notices": [], "errors": [],
                "ms": {}, "place_after": step.state.place}
        return self._write(record, loaded, step, state_before=loaded.rules.new_state(), talk=None, memory=memory,
                           turn=turn, claim=reply.id)

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

        def say(character: str, text: str) -> None:
            entry_id = self._new_id()
            entries.append(LogRecord(id=entry_id, role="character", text=text,
                                     created_at=ids.iso_from_ms(ids.id_time_ms(entry_id)),
                                     speaker=compiled.characters[character].name, character=character,
                                     expression=expressions.get(character, "neutral")))

        if talk is not None:
            if talk.expression:
                expressions[step.free_talk.speaker] = talk.expression
            say(step.free_talk.speaker, talk.text)
        for line in step.lines:
            for effect in line.effects:
                expressions[effect.character] = effect.key
            say(line.speaker, line.text)
        for notice in step.notices:
            if isinstance(notice, ExitsNotice) and notice.destinations:
                continue    # the destination buttons say it (with their own 「行き先」 label)
            entry_id = self._new_id()
            entries.append(LogRecord(id=entry_id, role="notice", text=notice.text,
                                     created_at=ids.iso_from_ms(ids.id_time_ms(entry_id))))
        last_line = next((e for e in reversed(entries) if e.role == "character"), None)
        speaking = last_line.character if last_line else None
        scene = self._scene(loaded, step, speaking)
        fields: dict[str, Any] = {"game": step.state.to_json(), "game_version": record.game_version + 1,
                                  "scene": json.dumps(scene, ensure_ascii=False),
                                  "director": json.dumps(memory, ensure_ascii=False)}
        if entries:
            fields["version"] = entries[-1].id
        if last_line is not None:
            image = self.catalog.resolve(last_line.character, last_line.expression or "neutral")
            fields.update(text=last_line.text, expression=image.expression, asked_expression=image.asked,
                          speaker=last_line.speaker, image_key=image.image_key, fallback_key=image.fallback_key,
                          updated_at=last_line.created_at)
        elif step.state.place != state_before.place and record.speaker and record.speaker not in {
                compiled.characters[c].name for c in compiled.places[step.state.place].people}:
            # A silent move away from the last speaker: the bubble must not show someone who is not here.
            fields.update(text="", speaker="")
        if not entries:
            fields["version"] = self._new_id()  # the scene changed (e.g. a silent move): the ETag must too
        return TurnWrite(expected_game_version=record.game_version, stage=fields, entries=entries, claim=claim,
                         claim_id=f"turn-{claim}" if claim else None, turn=turn)

    def _scene(self, loaded: LoadedScenario, step, speaking: str | None) -> dict:
        compiled = loaded.compiled
        state = step.state
        place = compiled.places[state.place]
        responder = compiled.responder(place.id)
        characters = []
        for cid in place.people:
            image = self.catalog.resolve(cid, state.expressions.get(cid, "neutral"))
            characters.append({"id": cid, "name": compiled.characters[cid].name, "expression": image.expression,
                               "image_key": image.image_key, "fallback_key": image.fallback_key,
                               "responder": cid == responder})
        destinations = []
        notices = []
        for notice in step.notices:
            if isinstance(notice, ExitsNotice) and notice.destinations:
                destinations = [{"place": p, "name": compiled.places[p].id} for p in notice.destinations]
            elif not isinstance(notice, EndingNotice):
                notices.append({"kind": notice.kind, "text": notice.text})
        scene = {"place": place.id, "place_name": place.id, "turn": state.turn, "characters": characters,
                 "speaking": speaking if speaking in place.people else None, "destinations": destinations,
                 "notices": notices}
        ending = loaded.rules.ending_of(state)
        if ending is not None:
            scene["ending"] = {"title": ending.title, "text": ending.body, "restart": RESTART_TEXT}
        return scene

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
            if turn.get("unplayable"):
                continue              # nothing was understood or played: not a case
            if turn.get("game") != game:
                game, setup = turn.get("game"), []
            case = {"id": f"play-{turn['id'][-8:].lower()}", "setup": list(setup), "text": turn["text"],
                    "expect": turn["input"]}
            if turn.get("to"):
                case["to"] = turn["to"]
            if turn.get("restart"):
                continue
            if not turn.get("move"):
                cases.append(case)
            setup.append(turn["input"])
        return {"scenario": record.scenario.removeprefix(SCENARIO_PREFIX).rsplit("-", 1)[0] + ".json",
                "cases": cases}


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text or "{}"), dict)
    except ValueError:
        return False


def _applied(record: StageRecord, write: TurnWrite) -> StageRecord:
    from dataclasses import replace
    return replace(record, **write.stage)

