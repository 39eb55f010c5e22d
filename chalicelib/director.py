"""The scenario director: plays a scenario on a stage.

A player's reply on a scenario stage is stored like any reply; the director
then claims it through the same fetch-once claim, interprets it, lets the
rules decide, and writes the whole turn — the claim, the new game state, every
line in order with its speaker and expression, notices, and a debug record —
as one conditional write on the game's version.  So a retried request, a
duplicate or a concurrent Lambda can never answer a reply twice or apply two
turns on the same game state, and a failed model never loses the reply.

A reply posted to a scenario stage is not stored on its own first: the turn
reads the stage (and the log, unless this process already holds the log at
the stage's current version), then writes the reply — already claimed —
together with the turn.  That is two DynamoDB requests per turn, three when
the log has to be read.  Replies stored unread by other paths are announced
on the stage item (``unread_hint``) and answered first, oldest first.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import ids, kept, observability
from .answers import Answerer
from .conversation import Conversation, PlayedTurn
from .errors import ApiError, NotFound, ValidationFailed
from .faces import NEUTRAL, ExpressionSource
from .interpret.interpreter import Interpreter
from .interpret.lexicon import compiled
from .scenario import EndingNotice, ExitsNotice, GameRules, GameState, PlayerInput, Step, load_scenario_text
from .scenario.conditions import START_WORD, faces_set
from .stage.models import ReplyAccepted, ReplyRequest
from .stage.records import (
    DirectorMemory,
    StoredCharacter,
    StoredDestination,
    StoredEnding,
    StoredNotice,
    StoredScene,
)
from .stage.service import CreatedStage, StageService
from .stage.store import (
    AlreadyClaimed,
    Guard,
    LogRecord,
    ReplyRecord,
    Role,
    StageKind,
    StageRecord,
    StageUpdate,
    StaleGame,
    StoredLine,
    TurnWrite,
)
from .stage.transient import transient
from .stage.voices import PENDING, VoiceJob, jobs_json
from .talk import Talker, TalkRequest, TalkResult
from .turn_record import (
    AnswerSource,
    FreeTalkRecord,
    JudgmentRecord,
    NoticeRecord,
    TurnRecord,
    VoiceRecord,
    VoiceSource,
)
from .voices import VoiceSpec

SCENARIO_PREFIX = "scenarios/"
# What building a scenario derived from its texts (kept.py), beside it under its hash and the code's fingerprint.
KEPT_PREFIX = "kept/"
# Shown to the player when a reply cannot be played at all (the debug view says why).
UNPLAYABLE_NOTICE = "うまく受け取れませんでした。言い方を変えて、もう一度どうぞ。"
RECENT_LINES = 6
_TURN_ATTEMPTS = 8
log_errors = logging.getLogger("butai.director")
log_kept = logging.getLogger("butai.director.kept")
# After an ending, the card's button (or the player typing it) starts a new game.
RESTART_TEXT = "もう一度"
_RESTART = compiled("stage", "restart", re.IGNORECASE)


@dataclass
class LoadedScenario:
    key: str
    rules: GameRules
    interpreter: Interpreter
    answerer: Answerer = field(default=None)  # type: ignore[assignment]
    conversation: Conversation = field(default=None)  # type: ignore[assignment]
    # What loading it cost this process (`butai bench coldstart` reports them).
    load_ms: float = 0.0
    build_ms: float = 0.0
    from_cache: bool = False    # what the build derives from the texts was read, kept beside it (kept.py)

    def __post_init__(self) -> None:
        if self.answerer is None:
            self.answerer = Answerer(self.rules, self.interpreter.names)
        if self.conversation is None:
            self.conversation = Conversation(self.rules, self.interpreter, self.answerer)

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

    @staticmethod
    def key_of(path: Path, data: bytes) -> str:
        """The key a scenario file is kept under: its name and the hash of its bytes."""
        return f"{SCENARIO_PREFIX}{path.stem}-{hashlib.sha256(data).hexdigest()[:16]}.json"

    def put(self, path: Path) -> str:
        data = path.read_bytes()
        load_scenario_text(data.decode("utf-8"), source=path.name)  # refuse a broken scenario before upload
        key = self.key_of(path, data)
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType="application/json")
        return key

    @staticmethod
    def kept_key(key: str) -> str:
        """Where what building the scenario ``key`` derives from its texts is kept, for this code."""
        return f"{KEPT_PREFIX}{key.removeprefix(SCENARIO_PREFIX).removesuffix('.json')}-{kept.fingerprint()}.json"

    def get(self, key: str) -> LoadedScenario:
        with self._lock:
            hit = self._cache.get(key)
        if hit:
            return hit
        started = time.perf_counter()
        # The kept results are read while the scenario is (two requests, one round trip's time).
        found: dict[str, Any] = {}
        reader = threading.Thread(target=self._read_kept, args=(key, found), daemon=True)
        reader.start()
        body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read().decode("utf-8")
        rules = GameRules(load_scenario_text(body, source=key.removeprefix(SCENARIO_PREFIX)))
        reader.join()
        primed = kept.prime(found.get("document"))
        built = time.perf_counter()
        backend = self.backend_factory() if self.backend_factory else None
        with kept.recording() as derived:
            loaded = LoadedScenario(key, rules, Interpreter(rules, backend), load_ms=(built - started) * 1000,
                                    from_cache=primed)
        # (the interpreter and the conversation: LoadedScenario builds the latter)
        loaded.build_ms = (time.perf_counter() - built) * 1000
        if not primed:
            self._keep(key, derived)
        with self._lock:
            self._cache[key] = loaded
        return loaded

    def _read_kept(self, key: str, found: dict[str, Any]) -> None:
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=self.kept_key(key))["Body"].read()
            found["document"] = json.loads(body)
        except Exception as exc:  # none kept yet (NoSuchKey, or AccessDenied without ListBucket), or unreadable
            log_kept.debug("no kept results for %s (%s)", key, type(exc).__name__)

    def _keep(self, key: str, derived: dict[str, dict[str, Any]]) -> None:
        """Puts what this build derived beside the scenario, for the next new instance: best effort (a
        failure costs the next instance the derivation, nothing else)."""
        try:
            body = json.dumps(kept.export(derived), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            self.s3.put_object(Bucket=self.bucket, Key=self.kept_key(key), Body=body,
                               ContentType="application/json")
        except Exception as exc:
            log_kept.warning("could not keep the derived results of %s: %s: %s", key, type(exc).__name__, exc)


class Director:
    def __init__(self, stages: StageService, library: ScenarioLibrary, talker: Talker | None = None, *,
                 players_see_debug: bool = False, new_id: Callable[[], str] = ids.new_id):
        # The one door to the stage: the director asks the service, never its store.
        self.stages = stages
        self.library = library
        self.talker = talker or Talker()
        self.players_see_debug = players_see_debug
        self._new_id = new_id

    # -- stages -------------------------------------------------------------------
    def create(self, name: str, scenario_key: str) -> CreatedStage:
        loaded = self.library.get(scenario_key)
        compiled = loaded.compiled
        host = compiled.responder(compiled.start_place) or next(iter(compiled.characters))
        created = self.stages.create_stage(name, host, kind=StageKind.SCENARIO, scenario=scenario_key, title=compiled.title)
        self._begin(self.stages.scenario_stage(created.stage_id), loaded, game_number=1)
        return created

    def reset(self, stage_id: str) -> None:
        record = self.stages.scenario_stage(stage_id)
        memory = DirectorMemory.read(record.director)
        self._begin(record, self.library.get(record.scenario), memory.game + 1)

    def _begin(self, record: StageRecord, loaded: LoadedScenario, game_number: int) -> None:
        """A new game on the stage: its start lines, written on top of the game ``record`` holds."""
        step = loaded.rules.start()
        memory = DirectorMemory(game=game_number)
        write = self._write(record, loaded, step, state_before=loaded.rules.new_state(), talk=None,
                            memory=memory, turn=None, claim=None)
        self.stages.apply_turn(record, write)

    # -- turns ----------------------------------------------------------------------
    def reply(self, stage_id: str, key: str | None, request: ReplyRequest, *,
              given: PlayerInput | None = None) -> ReplyAccepted:
        """A player's reply on a stage.  `given`: an input already decided, played without reading the text
        (`butai trace` and `butai lint` play written inputs such as 意図:音楽 through this same path)."""
        if self.stages.known_kind(stage_id) == StageKind.AGENT:
            return self.stages.reply(stage_id, key, request)
        guard, record = self.stages.player_stage(stage_id, key)
        if record.kind != StageKind.SCENARIO:
            return self.stages.reply(stage_id, key, request)
        record, log, answered = self._play(record, key=key, guard=guard, request=request, given=given)
        assert answered is not None         # a new reply is always answered, or stored for the next turn
        return ReplyAccepted(id=answered.id, created_at=answered.created_at, view=self.stages.view(record, log))

    def _play(self, record: StageRecord, *, key: str | None = None, guard: Guard | None = None,
              request: ReplyRequest | None = None,
              given: PlayerInput | None = None) -> tuple[StageRecord, list[LogRecord], ReplyRecord | None]:
        """Answers the unread replies the stage announces, then ``request`` (a
        new reply, written with its turn).  Returns (stage, log, new reply)."""
        stage_id = record.stage_id
        looked_at: str | None = None
        pending: list[ReplyRecord] = []
        if record.unread_hint != record.unread_seen:
            looked_at, pending = record.unread_hint, self.stages.unread_replies(stage_id)
        log = self.stages.turn_log(record)
        answered: ReplyRecord | None = None
        attempts = 0
        while (pending or (request is not None and answered is None)) and \
                attempts < _TURN_ATTEMPTS * (len(pending) + 1):
            attempts += 1
            incoming = None
            if pending:
                reply = pending[0]
            else:
                assert request is not None
                reply, incoming = self._new_reply(request)
            loaded = self.library.get(record.scenario)
            try:
                write = self.turn(record, loaded, reply, log, incoming=incoming,
                                  given=given if incoming is not None else None)
            except Exception as exc:  # noqa: BLE001 - see _unplayable
                if transient(exc):
                    raise
                write = self._unplayable(record, reply, exc)
            write = self._complete(write, record, reply, incoming, guard, looked_at, pending)
            try:
                try:
                    record, log = self.stages.apply_turn(record, write, log, key)
                except (AlreadyClaimed, StaleGame, ApiError):
                    raise
                except Exception as exc:  # noqa: BLE001 - e.g. an item over DynamoDB's size limit
                    if transient(exc) or write.turn is None or write.turn.unplayable:
                        raise
                    write = self._unplayable(record, reply, exc)
                    write = self._complete(write, record, reply, incoming, guard, looked_at, pending)
                    record, log = self.stages.apply_turn(record, write, log, key)
            except (AlreadyClaimed, StaleGame) as exc:
                observability.turn_conflict("claimed" if isinstance(exc, AlreadyClaimed) else "stale_game")
                if isinstance(exc, AlreadyClaimed):
                    pending.pop(0)            # another handler answered it
                # Another turn or line landed first: recompute on top of it.
                reread = self.stages.read_stage(stage_id)
                if reread is None:
                    raise NotFound("no such stage", "stage_id", code="stage_not_found") from None
                record = reread
                if record.unread_hint != record.unread_seen and record.unread_hint != looked_at:
                    looked_at, pending = record.unread_hint, self.stages.unread_replies(stage_id)
                log = self.stages.turn_log(record)
                continue
            if incoming is None:
                pending.pop(0)
            else:
                answered = reply
        if request is not None and answered is None:
            # The game stayed busy through every attempt: the reply is kept, unread, for the next turn.
            accepted = self.stages.reply(stage_id, key, request)
            answered = ReplyRecord(id=accepted.id, text=request.text, created_at=accepted.created_at,
                                   to=request.to, move=request.move)
            record = self.stages.read_stage(stage_id) or record
            log = self.stages.turn_log(record)
        return record, log, answered

    @staticmethod
    def _complete(write: TurnWrite, record: StageRecord, reply: ReplyRecord, incoming: LogRecord | None,
                  guard: Guard | None, looked_at: str | None, pending: list[ReplyRecord]) -> TurnWrite:
        # Conditioned on the log version it read, so the log it extends is exact.
        write.expected_version = record.version
        if incoming is not None:
            # A restart is a control, not a line the player said: claimed with the turn, never logged.
            control = reply.restart or (write.turn is not None and write.turn.restart)
            write.reply, write.reply_entry, write.guard = reply, None if control else incoming, guard
        if looked_at is not None and len(pending) <= 1:
            write.stage = replace(write.stage, unread_seen=looked_at)  # every reply announced so far is answered
        return write

    def _new_reply(self, request: ReplyRequest) -> tuple[ReplyRecord, LogRecord]:
        # A fresh id on every attempt: the reply is only written with its turn, so it sorts before the
        # turn's lines and after anything that landed before it.
        reply_id = self._new_id()
        created = ids.iso_from_ms(ids.id_time_ms(reply_id))
        return (ReplyRecord(id=reply_id, text=request.text, created_at=created, to=request.to, move=request.move,
                            restart=request.restart),
                LogRecord(id=reply_id, role=Role.PLAYER, text=request.text, created_at=created))

    def _unplayable(self, record: StageRecord, reply: ReplyRecord, exc: Exception) -> TurnWrite:
        """A reply that cannot be played, for whatever reason (a stored value the rules refuse, a bug, a
        turn too large to write), is answered all the same: claimed, with the character's fallback line (the
        one tapped, else who answers here) — or a notice where even that cannot be said — and the error in
        the turn's debug record and the logs, the game left as it was.  Otherwise the director would retry
        it on every turn and the stage would be stuck behind it for good."""
        log_errors.exception("reply %s cannot be played; answered with a fallback line", reply.id)
        observability.unplayable(type(exc).__name__)
        memory = DirectorMemory.read(record.director)
        entry_id = self._new_id()
        created = ids.iso_from_ms(ids.id_time_ms(entry_id))
        turn = TurnRecord(id=reply.id, game=memory.game, text=reply.text, to=reply.to, move=reply.move,
                          errors=[f"unplayable: {type(exc).__name__}: {str(exc)[:300]}"], unplayable=True)
        said = self._fallback_of(record, reply)
        if said is None:
            turn.notices = [NoticeRecord(kind="unplayable", text=UNPLAYABLE_NOTICE)]
            entry = LogRecord(id=entry_id, role=Role.NOTICE, text=UNPLAYABLE_NOTICE, created_at=created)
            line = None
        else:
            character, name, text, face = said
            image = self.stages.image(character, face)
            # A fallback line is authored: its voice may have been rendered ahead (nothing is rendered now).
            audio = self._ahead(record, character, text)
            entry = LogRecord(id=entry_id, role=Role.CHARACTER, text=text, created_at=created, speaker=name,
                              character=character, expression=image.expression,
                              expression_source=ExpressionSource.AGENT, audio=audio)
            line = StoredLine(text=text, expression=image.expression, asked_expression=image.asked,
                              expression_source=ExpressionSource.AGENT, speaker=name, image_key=image.image_key,
                              fallback_key=image.fallback_key, audio=audio or "", updated_at=created)
            turn.free_talk = FreeTalkRecord(speaker=character, source=AnswerSource.FALLBACK, reason="unplayable",
                                            text=text, expression=image.expression)
        return TurnWrite(expected_game_version=record.game_version,
                         stage=StageUpdate(game_version=record.game_version + 1, version=entry_id, line=line),
                         entries=[entry], claim=reply.id, claim_id=f"turn-{reply.id}", turn=turn)

    def _voice(self, record: StageRecord, character: str) -> VoiceSpec:
        """How a character of the stage's scenario sounds: the scenario's voice for them, else their
        manifest's, else the default."""
        authored = None
        try:
            scenario_character = self.library.get(record.scenario).compiled.characters.get(character)
            raw = getattr(scenario_character, "voice", None)
            if raw is not None:
                authored = VoiceSpec(raw.kokoro, raw.speed)
        except Exception:  # noqa: BLE001 - the voice never decides whether a line is said
            authored = None
        return self.stages.voice_spec(character, authored=authored)

    def _ahead(self, record: StageRecord, character: str, text: str) -> str | None:
        try:
            return self.stages.rendered_audio(record.scenario, self._voice(record, character), text)
        except Exception:  # noqa: BLE001 - the voice never decides whether a line is said
            log_errors.warning("no voice looked up for a line of %s", character, exc_info=True)
            return None

    def _fallback_of(self, record: StageRecord, reply: ReplyRecord) -> tuple[str, str, str, str] | None:
        """(character, display name, text, face) of the fallback line that answers an unplayable reply: the
        one the player tapped if present, else who answers at the place; None when nobody can."""
        try:
            loaded = self.library.get(record.scenario)
            compiled = loaded.compiled
            state = GameState.from_json(record.game)
            place = compiled.places.get(state.place)
            if place is None:
                return None
            who = reply.to if reply.to in place.people else compiled.responder(place.id)
            character = compiled.characters.get(who) if who else None
            if character is None or not character.fallbacks:
                return None
            # The same reply always gets the same line (a retried write says what the first try said).
            fallback = character.fallbacks[int(hashlib.sha256(reply.id.encode()).hexdigest(), 16)
                                           % len(character.fallbacks)]
            return character.id, character.name, fallback.text, fallback.expression or NEUTRAL
        except Exception:  # noqa: BLE001 - the notice answers when not even this can be worked out
            log_errors.exception("no fallback line for unplayable reply %s", reply.id)
            return None

    def turn(self, record: StageRecord, loaded: LoadedScenario, reply: ReplyRecord,
             log: list[LogRecord] | None = None, *, incoming: LogRecord | None = None,
             given: PlayerInput | None = None) -> TurnWrite:
        """Computes one turn (nothing is written).  ``incoming`` is the reply's
        log entry when the reply is written with the turn (not yet in ``log``).
        The turn logic is the conversation's (chalicelib/conversation); this
        adds the model, when one is configured, and builds the write."""
        started = time.perf_counter()
        rules = loaded.rules
        state = rules.restore(record.game)
        memory = DirectorMemory.read(record.director)
        if state.ended and not reply.move and (reply.restart or _RESTART.match(reply.text)):
            return self._restart(record, loaded, reply, memory)
        if reply.restart:
            # The restart control before the game has ended changes nothing (a page that sent it twice).
            turn = TurnRecord(id=reply.id, game=memory.game, text=reply.text, input=None, place_before=state.place,
                              place_after=state.place, context={"restart": "ignored: the game has not ended"})
            return self._write(record, loaded, Step(None, (), None, (), state), state_before=state, talk=None,
                               memory=memory, turn=turn, claim=reply.id)
        errors: list[str] = []
        if reply.to and reply.to not in loaded.compiled.characters:
            errors.append(f"unknown addressee {reply.to!r} ignored")
        speak = None
        if self.talker.generator is not None:
            def speak(step, addressee):
                nonlocal log
                if log is None:
                    log = self.stages.turn_log(record)
                recent = (log + [incoming]) if incoming is not None else log
                talk = self._free_talk(loaded, step, state, reply, addressee, memory, recent[-(RECENT_LINES + 1):])
                if talk.source == AnswerSource.FALLBACK and talk.reason not in (None, "no_model"):
                    errors.append(f"free conversation: {talk.reason}")
                return talk
        t = time.perf_counter()
        played = loaded.conversation.play("" if given is not None else reply.text, state, memory.conversation,
                                          to=reply.to, move=reply.move, speak=speak, given=given)
        play_ms = (time.perf_counter() - t) * 1000
        step = played.step
        errors += played.errors
        if played.result is not None:
            result = played.result
            observability.classified(result.interpretation.backend, result.error, result.interpretation.detail)
        talk = self._talk_of(played)
        memory.conversation = played.memory
        free_talk = None
        if talk is not None:
            # the authored answer's own speaker, else the model's (the character the rules asked to talk)
            speaker = played.answer.speaker if played.answer is not None else \
                talk.speaker or (step.free_talk.speaker if step.free_talk is not None else "")
            free_talk = talk.record(speaker, step.free_talk.intent if step.free_talk is not None else None)
            if played.answer is not None and played.answer.detail:
                free_talk.detail = played.answer.detail
        # The debug record is complete before the write is built (its timings stop here).
        interpretation = played.interpretation
        phases = {k: v for k, v in interpretation.ms.items() if k != "total"}
        talk_ms = talk.ms if talk else 0.0
        ms = {**phases, "rules": round(max(0.0, play_ms - sum(phases.values()) - talk_ms), 3),
              "talk": round(talk_ms, 3), "total": round((time.perf_counter() - started) * 1000, 3)}
        turn = TurnRecord(id=reply.id, game=memory.game, turn=step.state.turn, text=reply.text, to=reply.to,
                          move=reply.move, place_before=state.place, place_after=step.state.place,
                          input=str(played.input), addressee=played.addressee, interpretation=interpretation,
                          lines=list(step.line_ids), free_talk=free_talk,
                          notices=[NoticeRecord.model_validate(n.to_dict()) for n in step.notices], errors=errors,
                          ms=ms, context=played.context or None)
        observability.turn_latency(ms["total"])
        write = self._write(record, loaded, step, state_before=state, talk=talk, memory=memory,
                            turn=turn, claim=reply.id,
                            first=[(a.speaker, a.text, a.expression) for a in played.before],
                            effect_faces={c: f for a in [*played.before, *([played.answer] if played.answer else [])]
                                          for c, f in a.faces.items()})
        write.played = played
        return write

    @staticmethod
    def _talk_of(played: PlayedTurn) -> TalkResult | None:
        """The turn's free-conversation line as the write takes it: the model's, or the authored answer."""
        model = played.model
        if played.kind == AnswerSource.MODEL:
            return model
        answer = played.answer
        if answer is None:
            return None
        observability.fell_back(model.reason if model is not None else None)
        return TalkResult(answer.text, answer.source, reason=model.reason if model is not None else "no_model",
                          fallback_id=answer.ref.removeprefix("fallback/") if answer.source == AnswerSource.FALLBACK and answer.ref
                          else None,
                          attempts=model.attempts if model is not None else [],
                          ms=model.ms if model is not None else 0.0,
                          speaker=answer.speaker, expression=answer.expression, act=answer.act, ref=answer.ref)

    def _restart(self, record: StageRecord, loaded: LoadedScenario, reply: ReplyRecord,
                 memory: DirectorMemory) -> TurnWrite:
        """A new game after an ending, answered as the reply's turn (claimed once, like any turn)."""
        step = loaded.rules.start()
        memory = DirectorMemory(game=memory.game + 1, last_fallback=memory.last_fallback)
        turn = TurnRecord(id=reply.id, game=memory.game, text=reply.text, to=reply.to, move=reply.move,
                          restart=True, input=START_WORD, lines=list(step.line_ids),
                          place_after=step.state.place, turn=step.state.turn)
        return self._write(record, loaded, step, state_before=loaded.rules.new_state(), talk=None, memory=memory,
                           turn=turn, claim=reply.id)

    def _free_talk(self, loaded, step, state: GameState, reply: ReplyRecord, addressee, memory,
                   recent: list[LogRecord]):
        compiled = loaded.compiled
        speaker = compiled.characters[step.free_talk.speaker]
        lines = [(e.speaker or "主人公", e.text) for e in recent if e.role != Role.NOTICE and e.id != reply.id]
        others = [e.text for e in recent if e.role == Role.CHARACTER and e.character != speaker.id]
        last = next((e.text for e in reversed(recent) if e.role == Role.CHARACTER), None)
        talk = self.talker.say(TalkRequest(
            character=speaker, knowledge=step.free_talk.knowledge, player_text=reply.text,
            place=compiled.places[state.place].id,
            addressee=compiled.characters[addressee].name if addressee else None,
            recent=lines[-RECENT_LINES:], previous_line=last, other_lines=others,
            last_fallback=memory.last_fallback.get(speaker.id)))
        if talk.fallback_id:
            memory.last_fallback[speaker.id] = talk.fallback_id
        return talk

    def _write(self, record: StageRecord, loaded: LoadedScenario, step, *, state_before: GameState, talk,
               memory: DirectorMemory, turn: TurnRecord | None, claim: str | None,
               first: list[tuple[str, str, str]] | None = None,
               effect_faces: dict[str, str] | None = None) -> TurnWrite:
        """`first`: authored lines said before the turn's answer (the answer to a first part of the line,
        by another character), each (speaker, text, expression); `effect_faces`: the faces the effects of
        those answers set (a reply's 表情:)."""
        compiled = loaded.compiled
        entries: list[LogRecord] = []
        # The stage's own voice (docs/stage.md, "Voice"): a line rendered ahead carries its audio now; any other
        # is rendered after the write when a voice worker runs (the line shows at once, its audio follows).
        jobs: list[VoiceJob] = []
        voices: list[VoiceRecord] = []

        def voice(character: str, text: str, entry_id: str, created: str) -> tuple[str | None, str | None]:
            spec = self._voice(record, character)
            audio = self.stages.rendered_audio(record.scenario, spec, text)
            if audio is not None:
                voices.append(VoiceRecord(entry=entry_id, character=character, voice=spec.voice, speed=spec.speed,
                                          source=VoiceSource.AHEAD, audio=audio))
                return audio, None
            if not self.stages.voice_on:
                return None, None
            jobs.append(VoiceJob(stage=record.stage_id, entry=entry_id, character=character, text=text,
                                 voice=spec.voice, speed=spec.speed, created_at=created,
                                 turn=turn.id if turn is not None else None))
            voices.append(VoiceRecord(entry=entry_id, character=character, voice=spec.voice, speed=spec.speed,
                                      source=VoiceSource.RENDERED, pending=True))
            return None, PENDING

        # Faces belong to the turn (docs/stage.md, "Faces at rest"): a character shows the face set for them
        # in this turn (an effect of one of its lines, an authored answer's face, a model line's judged face);
        # one without, silent or speaking a line that sets none, shows the resting face.
        faces: dict[str, str] = {}

        def say(character: str, text: str, judged: str | None = None, scores: dict[str, float] | None = None) -> None:
            entry_id = self._new_id()
            created = ids.iso_from_ms(ids.id_time_ms(entry_id))
            faces[character] = judged or faces.get(character) or NEUTRAL
            audio, audio_status = voice(character, text, entry_id, created)
            entries.append(LogRecord(id=entry_id, role=Role.CHARACTER, text=text,
                                     created_at=created,
                                     speaker=compiled.characters[character].name, character=character,
                                     expression=faces[character],
                                     expression_source=ExpressionSource.AUTO if scores is not None
                                     else ExpressionSource.AGENT,
                                     expression_scores=scores, audio=audio, audio_status=audio_status))

        for speaker_id, text, expression in first or ():
            faces[speaker_id] = expression     # an authored first part carries its own face
            say(speaker_id, text)
        if talk is not None:
            speaker = step.free_talk.speaker
            if talk.expression:
                # An authored line (reaction, knowledge, fallback) carries its own face.
                faces[speaker] = talk.expression
                say(speaker, talk.text)
            else:
                # A model's line has no authored face: the stage judges one from its words.
                judgment = self.stages.judge_line(speaker, talk.text)
                if turn is not None and turn.free_talk is not None:
                    # Still part of building the write: the record is complete before it is returned.
                    turn.free_talk.expression = judgment.expression
                    turn.free_talk.judgment = JudgmentRecord.model_validate(judgment.to_dict())
                say(speaker, talk.text, judgment.expression, judgment.rounded_scores())
        faces.update(effect_faces or {})
        for line in step.lines:
            # Only a face effect changes a face (a フラグ: effect is in the game state already).
            faces.update(faces_set(line.effects))
            say(line.speaker, line.text)
        for notice in step.notices:
            if isinstance(notice, ExitsNotice) and notice.destinations:
                continue    # the destination buttons say it (with their own 「行き先」 label)
            entry_id = self._new_id()
            entries.append(LogRecord(id=entry_id, role=Role.NOTICE, text=notice.text,
                                     created_at=ids.iso_from_ms(ids.id_time_ms(entry_id))))
        last_line = next((e for e in reversed(entries) if e.role == Role.CHARACTER), None)
        speaking = last_line.character if last_line else None
        scene = self._scene(loaded, step, speaking, faces)
        line = None
        if last_line is not None and last_line.character is not None:
            image = self.stages.image(last_line.character, last_line.expression or NEUTRAL)
            line = StoredLine(text=last_line.text, expression=image.expression, asked_expression=image.asked,
                              expression_source=last_line.expression_source or ExpressionSource.AGENT,
                              speaker=last_line.speaker or "", image_key=image.image_key,
                              fallback_key=image.fallback_key, audio=last_line.audio or "",
                              updated_at=last_line.created_at)
        # A silent move away from the last speaker: the bubble must not show someone who is not here.
        silence = line is None and step.state.place != state_before.place and bool(record.line.speaker) and \
            record.line.speaker not in {compiled.characters[c].name for c in compiled.places[step.state.place].people}
        update = StageUpdate(game_version=record.game_version + 1,
                             # Without an entry the scene still changed (e.g. a silent move): the ETag must too.
                             version=entries[-1].id if entries else self._new_id(),
                             game=step.state.to_json(), scene=scene.to_json(), director=memory.to_json(),
                             line=line, silence=silence, voice_wanted=jobs_json(jobs) if jobs else None)
        if turn is not None and voices:
            turn.voices = voices
        return TurnWrite(expected_game_version=record.game_version, stage=update, entries=entries, claim=claim,
                         claim_id=f"turn-{claim}" if claim else None, turn=turn)

    def _scene(self, loaded: LoadedScenario, step, speaking: str | None,
               faces: dict[str, str] | None = None) -> StoredScene:
        compiled = loaded.compiled
        state = step.state
        place = compiled.places[state.place]
        responder = compiled.responder(place.id)
        characters = []
        for cid in place.people:
            image = self.stages.image(cid, (faces or {}).get(cid) or NEUTRAL)
            characters.append(StoredCharacter(id=cid, name=compiled.characters[cid].name,
                                              expression=image.expression, image_key=image.image_key,
                                              fallback_key=image.fallback_key, responder=cid == responder))
        destinations = []
        notices = []
        for notice in step.notices:
            if isinstance(notice, ExitsNotice) and notice.destinations:
                destinations = [StoredDestination(place=p, name=compiled.places[p].id) for p in notice.destinations]
            elif not isinstance(notice, EndingNotice):
                notices.append(StoredNotice(kind=notice.kind, text=notice.text))
        ending = loaded.rules.ending_of(state)
        return StoredScene(place=place.id, place_name=place.id, turn=state.turn, characters=characters,
                           speaking=speaking if speaking in place.people else None, destinations=destinations,
                           notices=notices,
                           ending=None if ending is None else StoredEnding(title=ending.title, text=ending.body,
                                                                           restart=RESTART_TEXT))

    # -- debug view and evaluation export -------------------------------------------
    def debug(self, stage_id: str, key: str | None, limit: int = 1) -> list[TurnRecord]:
        """The stage's newest turn records (the debug view): the agent's key, or either key when
        players may see it."""
        stage = self.stages.check_key(stage_id, key, agent_only=not self.players_see_debug)
        if stage.kind != StageKind.SCENARIO:
            raise NotFound("the debug view belongs to scenario stages", "stage_id", code="not_a_scenario_stage")
        if not 1 <= limit <= 50:
            raise ValidationFailed("limit must be between 1 and 50", "limit")
        return self.stages.turn_records(stage_id, limit)
