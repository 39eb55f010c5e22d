"""The agent protocol's logic: speak, reply, fetch_replies, get_stage, stage creation."""
from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import ids
from ..errors import Conflict, Forbidden, NotFound, Unauthorized, ValidationFailed
from ..expression import ExpressionChoice, ExpressionJudge, Judgment, LexiconJudge
from ..faces import ExpressionSource
from ..turn_record import TurnRecord, VoiceRecord, VoiceSource
from ..voices import VoiceSpec
from . import face_images as ex
from . import keys, waiting
from .audio import check_audio_url
from .catalog import CharacterCatalog, ResolvedImage
from .models import (
    AUTO_EXPRESSION,
    LEASE_DEFAULT_S,
    LOG_LIMIT,
    AckResult,
    AudioStatus,
    CurrentLine,
    Destination,
    Ending,
    LogEntry,
    Notice,
    Reply,
    ReplyAccepted,
    ReplyRequest,
    SceneCharacter,
    SceneView,
    SpeakRequest,
    SpeakResult,
    StageInfo,
    StageView,
    Voice,
)
from .records import StoredScene
from .store import (
    Claim,
    DuplicateRequest,
    Guard,
    GuardFailed,
    LogRecord,
    Pending,
    ReplyRecord,
    Role,
    SpeakWrite,
    StageKind,
    StageRecord,
    StageStore,
    StoredLine,
    TurnWrite,
)
from .tails import LogTails
from .voices import PENDING, RenderedLines, VoiceJob, jobs_from_json, jobs_json, spec_of, voiced_digest
from .waiting import MAX_WAIT_S, BackoffPolling, ReplySignal, ReplyWaiter

AGENT = "agent_key_hash"
PLAYER = "player_key_hash"
# A long-poll waiting for someone else's lease to end looks again this long after it (clocks of the
# reading and the writing process need not agree to the millisecond).
_LEASE_SLACK_S = 0.05
log = logging.getLogger("butai.stage")


@dataclass(frozen=True)
class CreatedStage:
    stage_id: str
    name: str
    character: str
    agent_key: str
    player_key: str


@dataclass(frozen=True)
class NotModified:
    version: str


def etag(version: str) -> str:
    return f'"{version}"'


def view_version(stage: StageRecord) -> str:
    """The version a view of the stage shows (and its ETag): the stage's, marked by the lines voiced since,
    so that audio arriving for a line shown changes what a GET answers."""
    return f"{stage.version}.{voiced_digest(stage.voiced)}" if stage.voiced else stage.version


class StageService:
    def __init__(self, store: StageStore, catalog: CharacterCatalog, *, assets_base_url: str = "",
                 default_character: str = "hiyori", new_id: Callable[[], str] = ids.new_id,
                 judge: ExpressionJudge | None = None, own_origins: tuple[str, ...] = (),
                 audio_origins: tuple[str, ...] = (),
                 waiter: ReplyWaiter | None = None, clock: Callable[[], float] = time.time,
                 rendered: RenderedLines | None = None, voice_on: bool = False,
                 voice_jobs: Callable[[list[VoiceJob]], None] | None = None):
        self.store = store
        # Lease ends are wall-clock times (epoch milliseconds) stored with the reply, so that every
        # process reads them alike.
        self._clock = clock
        # How a long-polling fetch learns of a new reply: the reply write's own
        # signal in one process (the local runtime installs a ReplySignal),
        # else re-queries with backoff (Lambda).
        self.waiter: ReplyWaiter = waiter or BackoffPolling()
        self.catalog = catalog
        self.assets_base_url = assets_base_url
        self.default_character = default_character
        self._new_id = new_id
        # Judges the face of a line sent without an expression (the embedded judge unless configured).
        self.judge = judge or LexiconJudge()
        self.own_origins = own_origins
        self.audio_origins = audio_origins
        # A stage's character never changes, so it is remembered per process.
        self._stage_characters: dict[str, str] = {}
        self._stage_kinds: dict[str, StageKind] = {}
        # The log tail each scenario stage's last turn in this process left (a turn then reads no log).
        self.log_tails = LogTails()
        # The stage's own voice (stage/voices.py): scenario lines rendered ahead; whether lines without audio
        # are rendered after their write (a voice worker runs); who is handed them in this process (the local
        # voice worker; None in the cloud, where the voice function reads them from the table's stream).
        self.rendered = rendered
        self.voice_on = voice_on
        self.voice_jobs = voice_jobs

    # -- administration (CLI, local runtime) -------------------------------
    def create_stage(self, name: str, character: str | None = None, *, kind: StageKind = StageKind.AGENT, scenario: str = "",
                     title: str = "") -> CreatedStage:
        character = character or self.default_character
        if not name or len(name) > 64:
            raise ValidationFailed("name must be 1-64 characters", "name")
        if not ex.is_valid_character(character):
            raise ValidationFailed(f"invalid character id {character!r}", "character")
        info = self.catalog.get(character)
        if info is None:
            raise NotFound(f"character {character!r} has no images; upload them with "
                           f"`butai images upload DIR --character {character}`", "character")
        agent_key, player_key = keys.new_key(keys.AGENT_PREFIX), keys.new_key(keys.PLAYER_PREFIX)
        event_id = self._new_id()
        now = ids.iso_from_ms(ids.id_time_ms(event_id))
        image = self.catalog.resolve(character, ex.FALLBACK)
        record = StageRecord(
            stage_id=keys.new_stage_id(), name=name, character=character,
            agent_key_hash=keys.hash_key(agent_key), player_key_hash=keys.hash_key(player_key),
            created_at=now, version=event_id,
            line=StoredLine(speaker=info.name, image_key=image.image_key, fallback_key=image.fallback_key,
                            updated_at=now),
            kind=kind, scenario=scenario, title=title)
        self.store.create_stage(record)
        return CreatedStage(record.stage_id, name, character, agent_key, player_key)

    def rotate_keys(self, stage_id: str, which: str = "both") -> dict[str, str]:
        """New keys for a stage; the old ones stop working at once (no key is cached anywhere)."""
        _known_shape(stage_id)
        if which not in ("agent", "player", "both"):
            raise ValidationFailed("which must be agent, player or both", "which")
        if self.store.get_stage(stage_id) is None:
            raise NotFound("no such stage", "stage_id", code="stage_not_found")
        new = {}
        if which in ("agent", "both"):
            new["agent_key"] = keys.new_key(keys.AGENT_PREFIX)
        if which in ("player", "both"):
            new["player_key"] = keys.new_key(keys.PLAYER_PREFIX)
        self.store.set_key_hashes(stage_id, {f"{role}_hash": keys.hash_key(key) for role, key in new.items()})
        return new

    def list_stages(self) -> list[StageRecord]:
        return self.store.list_stages()

    # -- protocol ---------------------------------------------------------------
    def speak(self, stage_id: str, key: str | None, request: SpeakRequest) -> SpeakResult:
        guard = self._guard(key, AGENT)
        _known_shape(stage_id)
        # The key check rides on the write itself (the store's guard); only the
        # stage's character is read, once per process.
        character = self._character_of(stage_id)
        audio = None
        if request.audio is not None:
            audio = check_audio_url(request.audio, self.own_origins, self.audio_origins)
        # The face is settled before the write, so the line stays one request.
        asked = request.expression or AUTO_EXPRESSION
        scores = None
        if asked == AUTO_EXPRESSION:
            judgment = self.judge_line(character, request.text)
            chosen, source, scores = judgment.expression, ExpressionSource.AUTO, judgment.rounded_scores()
        else:
            chosen, source = asked, ExpressionSource.AGENT
        image = self.catalog.resolve(character, chosen if ex.is_valid_key(chosen) else ex.FALLBACK)
        speaker = request.speaker or self._character_name(character)
        entry_id = self._new_id()
        created = ids.iso_from_ms(ids.id_time_ms(entry_id))
        jobs: list[VoiceJob] = []
        if audio is None and self.voice_on:
            # The agent sent no audio: the stage renders the line's voice after the write (the line shows now).
            spec = self.voice_spec(character, request.voice)
            jobs = [VoiceJob(stage=stage_id, entry=entry_id, character=character, text=request.text,
                             voice=spec.voice, speed=spec.speed, created_at=created)]
        status: AudioStatus | None = PENDING if jobs else None
        result = SpeakResult(id=entry_id, expression=image.expression, asked_expression=asked,
                             expression_source=source, expression_scores=scores, audio=audio, audio_status=status,
                             image_url=self._url(image.image_key), version=entry_id, created_at=created)
        write = SpeakWrite(
            line=StoredLine(text=request.text, expression=image.expression, asked_expression=asked, speaker=speaker,
                            image_key=image.image_key, fallback_key=image.fallback_key, expression_source=source,
                            audio=audio or "", updated_at=created),
            entry=LogRecord(id=entry_id, role=Role.CHARACTER, text=request.text, created_at=created,
                            speaker=speaker, expression=image.expression, expression_source=source,
                            expression_scores=scores, audio=audio, audio_status=status),
            request_id=request.request_id, request_fingerprint=_fingerprint(request),
            response=result.model_dump(), voice_wanted=jobs_json(jobs) if jobs else None)
        try:
            self.store.speak(stage_id, guard, write)
        except GuardFailed:
            raise self._auth_error(self.store.get_stage(stage_id), key, AGENT) from None
        except DuplicateRequest as dup:
            if dup.fingerprint != write.request_fingerprint:
                raise Conflict("request_id was already used for a different line", "request_id",
                               code="request_id_reused") from None
            return SpeakResult.model_validate(dup.response)
        self._hand_over(jobs)
        return result

    def judge_line(self, character: str, text: str) -> Judgment:
        """The face for a line of ``character``, chosen among the expressions it has images for."""
        info = self.catalog.get(character)
        keys = tuple(info.images) if info else (ex.FALLBACK,)
        return self.judge.judge(text, ExpressionChoice.of(keys, character, info.name if info else character))

    def reply(self, stage_id: str, key: str | None, request: ReplyRequest) -> ReplyAccepted:
        guard = self._guard(key, PLAYER)
        _known_shape(stage_id)
        reply_id = self._new_id()
        created = ids.iso_from_ms(ids.id_time_ms(reply_id))
        record = ReplyRecord(id=reply_id, text=request.text, created_at=created, to=request.to, move=request.move)
        try:
            self.store.add_reply(stage_id, guard, record,
                                 LogRecord(id=reply_id, role=Role.PLAYER, text=request.text, created_at=created))
        except GuardFailed:
            raise self._auth_error(self.store.get_stage(stage_id), key, PLAYER) from None
        if isinstance(self.waiter, ReplySignal):
            self.waiter.published(stage_id, record)
        return ReplyAccepted(id=reply_id, created_at=created)

    def fetch_replies(self, stage_id: str, key: str | None, request_id: str | None = None,
                      wait: float | None = None, *, ack: list[str] | None = None,
                      lease: float | None = None) -> list[Reply]:
        """The replies nobody holds, each handed out under a lease (``lease`` seconds, default 30) to this
        caller alone.  ``ack`` acknowledges earlier ones first.  With ``wait`` (seconds, at most 20) an
        empty answer is held until a reply arrives, a lease ends or the wait ends; the key is checked
        before any waiting.  A retry with the same ``request_id`` gets back what that call still holds and
        does not acknowledge; when it holds nothing more, it is a fetch like any other."""
        guard = self._guard(key, AGENT)
        _known_shape(stage_id)
        lease_ms = int((lease or LEASE_DEFAULT_S) * 1000)
        acks = list(dict.fromkeys(ack or []))
        claim_id = f"req:{request_id}" if request_id else self._new_id()
        try:
            deadline = time.monotonic() + min(float(wait or 0), MAX_WAIT_S)
            # The mark is taken before the first look, so a reply written in between still wakes the wait.
            mark = self.waiter.mark(stage_id) if wait else None
            pending = self.store.pending_replies(stage_id)
            if request_id:
                # A retry of a fetch whose answer was lost: the replies that call still holds, again (lease
                # renewed), and nothing new.  The one query above shows them: no second read.  What the
                # retry acknowledges is handled, so it is acknowledged, not handed back: a caller that sends
                # one request id on every call and acknowledges each batch with the next moves on.
                mine = [r for r in pending.held + pending.claimable if r.claim_id == claim_id and r.id not in acks]
                if mine:
                    held = self.store.renew_claim(stage_id, guard, mine, self._claim_of(claim_id, lease_ms), ack=acks)
                    acks = []               # applied with the renewal
                    if held:
                        return [_handed_out(r) for r in held]
            chosen = set(acks)
            claimable = [r for r in pending.claimable if r.id not in chosen]
            if waiting.client_gone():
                # The caller has gone already (the local server saw it): claim nothing for it.
                if acks:
                    self.store.ack_replies(stage_id, guard, acks)
                return []
            if claimable or acks:
                # One guarded write: the acknowledgements and the claims (and so the key check).
                replies = self._claim(stage_id, guard, claimable, claim_id, lease_ms, ack=acks)
            else:
                # Nothing to write, so no guarded write checks the key: check it here, before any waiting.
                self._check_agent(stage_id, key, guard)
                replies = []
            if replies or not wait or not self.waiter.admit(stage_id):
                # Past the cap on waiting fetches the answer comes at once (docs/scaling.md).
                return replies
            try:
                return self._wait_and_claim(stage_id, guard, claim_id, lease_ms, deadline, mark, pending)
            finally:
                self.waiter.release(stage_id)
        except GuardFailed:
            # Also a key rotated while a long-poll waited.
            raise self._auth_error(self.store.get_stage(stage_id), key, AGENT) from None

    def _wait_and_claim(self, stage_id: str, guard: Guard, claim_id: str, lease_ms: int, deadline: float,
                        mark: object, pending: Pending) -> list[Reply]:
        replies: list[Reply] = []
        while not replies:
            left = deadline - time.monotonic()
            if left <= 0 or waiting.client_gone():
                return []
            # Wake for a new reply, or when the earliest lease held by someone else ends (its reply
            # may then be handed out here).
            until_lease = None if pending.next_lease_end_ms is None else \
                max(0.0, (pending.next_lease_end_ms - self._now_ms()) / 1000) + _LEASE_SLACK_S
            woken = self.waiter.wait(stage_id, mark, left if until_lease is None else min(left, until_lease))
            if waiting.client_gone() or self.waiter.closed:
                # The caller is gone (the local server saw its socket close): claim nothing for it.
                return []
            if woken is None:
                if until_lease is None or until_lease >= left:
                    return []
                pending = self.store.pending_replies(stage_id)      # a lease ended: look again
                replies = self._claim(stage_id, guard, pending.claimable, claim_id, lease_ms)
                continue
            # Woken by a reply (another fetch may claim it first; then wait on).  In one process the
            # signal knows what was written since the mark: claim that without a query.
            known = self.waiter.published_since(stage_id, mark) if isinstance(self.waiter, ReplySignal) \
                else None
            mark = woken
            if known is None:
                pending = self.store.pending_replies(stage_id)
                known = pending.claimable
            replies = self._claim(stage_id, guard, known, claim_id, lease_ms)
        return replies

    def _claim(self, stage_id: str, guard: Guard, unread: list[ReplyRecord], claim_id: str,
               lease_ms: int, ack: list[str] | None = None) -> list[Reply]:
        if not unread and not ack:
            return []
        claimed = self.store.claim_replies(stage_id, guard, unread, self._claim_of(claim_id, lease_ms), ack=ack)
        return [_handed_out(r) for r in sorted(claimed, key=lambda r: r.id)]

    def _claim_of(self, claim_id: str, lease_ms: int) -> Claim:
        return Claim(claim_id, self._now_ms() + lease_ms)

    def ack_replies(self, stage_id: str, key: str | None, reply_ids: list[str]) -> AckResult:
        """Acknowledges replies handed out by fetches: they are handled and never handed out again."""
        guard = self._guard(key, AGENT)
        _known_shape(stage_id)
        try:
            acked = self.store.ack_replies(stage_id, guard, list(reply_ids))
        except GuardFailed:
            raise self._auth_error(self.store.get_stage(stage_id), key, AGENT) from None
        done = set(acked)
        return AckResult(acked=acked, unknown=[rid for rid in dict.fromkeys(reply_ids) if rid not in done])

    def _check_agent(self, stage_id: str, key: str | None, guard: Guard) -> None:
        stage = self.store.get_stage(stage_id)
        if stage is None or not keys.same_hash(stage.agent_key_hash, guard.value):
            raise self._auth_error(stage, key, AGENT)

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def get_stage(self, stage_id: str, key: str | None, if_none_match: str | None = None) -> StageView | NotModified:
        stage = self.check_key(stage_id, key, agent_only=False)
        if if_none_match and etag(view_version(stage)) in _etags(if_none_match):
            return NotModified(view_version(stage))
        return self.view(stage, self.store.recent_log(stage_id, LOG_LIMIT))

    def view(self, stage: StageRecord, log: list[LogRecord]) -> StageView:
        character_name = self._character_name(stage.character)
        return StageView(
            stage=StageInfo(id=stage.stage_id, name=stage.name, character=stage.character,
                            character_name=character_name, voice=self.voice_of(stage.character), kind=stage.kind,
                            title=stage.title or None),
            current=self._current(stage.line, character_name),
            log=[self._entry(e, stage.character) for e in log],
            version=view_version(stage),
            scene=self._scene(stage.scene) if stage.scene else None)

    def _entry(self, e: LogRecord, stage_character: str) -> LogEntry:
        entry = LogEntry(id=e.id, role=e.role, speaker=e.speaker, character=e.character, text=e.text,
                         expression=e.expression, expression_source=e.expression_source,
                         expression_scores=e.expression_scores, audio=e.audio,
                         audio_status=_audio_status(e.audio_status),
                         created_at=e.created_at)
        if e.role == Role.CHARACTER and e.expression:
            # The face each line was said with, so the page can show every line of a turn with its own face
            # (the manifests are cached per process: no read per entry).
            image = self.catalog.resolve(e.character or stage_character, e.expression)
            entry.image_url = self._url(image.image_key)
            entry.fallback_image_url = self._url(image.fallback_key)
        return entry

    def _current(self, line: StoredLine, character_name: str) -> CurrentLine:
        return CurrentLine(text=line.text, expression=line.expression, asked_expression=line.asked_expression,
                           expression_source=ExpressionSource.AUTO if line.expression_source == ExpressionSource.AUTO
                           else ExpressionSource.AGENT,
                           audio=line.audio or None, speaker=line.speaker or character_name,
                           image_url=self._url(line.image_key), fallback_image_url=self._url(line.fallback_key),
                           updated_at=line.updated_at)

    def _scene(self, stored: str) -> SceneView:
        # Scenes are stored with object keys; URLs depend on where assets are served.
        scene = StoredScene.from_json(stored)
        return SceneView(
            place=scene.place, place_name=scene.place_name, turn=scene.turn, speaking=scene.speaking,
            characters=[SceneCharacter(id=c.id, name=c.name, expression=c.expression, responder=c.responder,
                                       image_url=self._url(c.image_key), fallback_image_url=self._url(c.fallback_key),
                                       voice=self.voice_of(c.id))
                        for c in scene.characters],
            destinations=[Destination(place=d.place, name=d.name) for d in scene.destinations],
            notices=[Notice(kind=n.kind, text=n.text) for n in scene.notices],
            ending=None if scene.ending is None else Ending(title=scene.ending.title, text=scene.ending.text,
                                                           restart=scene.ending.restart))

    def known_kind(self, stage_id: str) -> StageKind | None:
        """The stage's kind if this process has seen it, without asking the store."""
        return self._stage_kinds.get(stage_id)

    def player_stage(self, stage_id: str, key: str | None) -> tuple[Guard, StageRecord]:
        """Reads the stage for a player's reply and checks the player key on it
        (the scenario director's one read of a turn)."""
        guard = self._guard(key, PLAYER)
        _known_shape(stage_id)
        stage = self.store.get_stage(stage_id)
        if stage is None or not keys.same_hash(stage.player_key_hash, guard.value):
            raise self._auth_error(stage, key, PLAYER)
        self._stage_kinds[stage_id] = stage.kind
        return guard, stage

    def auth_error(self, stage_id: str, key: str | None, wanted: str):
        """The 401/403/404 for a write whose key guard failed (reads the stage to tell them apart)."""
        return self._auth_error(self.store.get_stage(stage_id), key, wanted)

    def check_key(self, stage_id: str, key: str | None, *, agent_only: bool) -> StageRecord:
        """Reads the stage and checks the key (agent key, or either key)."""
        token = self._require_key(key)
        _known_shape(stage_id)
        stage = self.store.get_stage(stage_id)
        hashed = keys.hash_key(token)
        if stage is None or not (keys.same_hash(stage.agent_key_hash, hashed) or
                                 (not agent_only and keys.same_hash(stage.player_key_hash, hashed))):
            raise self._auth_error(stage, key, AGENT if agent_only else None)
        return stage

    def authenticate(self, stage_id: str, key: str | None, role: str) -> None:
        """Raises the error a request with this key would get on a route for ``role`` (AGENT or PLAYER).

        The routes call it only when the request is about to be refused for another reason (a bad body
        or query): authentication comes first, so a caller without the right key learns nothing about
        what a valid request looks like, while a valid request still costs one guarded write."""
        token = self._require_key(key)
        _known_shape(stage_id)
        stage = self.store.get_stage(stage_id)
        if stage is None or not keys.same_hash(getattr(stage, role), keys.hash_key(token)):
            raise self._auth_error(stage, key, role)

    # -- scenario stages: what the director asks of the stage -------------------
    def read_stage(self, stage_id: str) -> StageRecord | None:
        """The stage as stored (one consistent read), or None."""
        return self.store.get_stage(stage_id)

    def scenario_stage(self, stage_id: str) -> StageRecord:
        """The stage, which must be a scenario stage (else 404)."""
        record = self.store.get_stage(stage_id)
        if record is None or record.kind != StageKind.SCENARIO:
            raise NotFound("no such scenario stage", "stage_id")
        return record

    def unread_replies(self, stage_id: str) -> list[ReplyRecord]:
        """The replies stored unread, oldest first."""
        return self.store.unread_replies(stage_id)

    def turn_log(self, record: StageRecord) -> list[LogRecord]:
        """The last LOG_LIMIT log entries at the stage's version: remembered from this process's last
        turn on the stage, else read."""
        log = self.log_tails.at(record.stage_id, record.version)
        if log is not None:
            return log
        log = self.store.recent_log(record.stage_id, LOG_LIMIT)
        # A log read after the stage may hold a line newer than record.version; it is then kept under a
        # version the stage has already left, and never matches again.
        self.log_tails.keep(record.stage_id, record.version, log)
        return log

    def apply_turn(self, record: StageRecord, write: TurnWrite, log: list[LogRecord] | None = None,
                   key: str | None = None) -> tuple[StageRecord, list[LogRecord]]:
        """Writes one scenario turn whole (the store's one transaction) and returns the stage as the write
        left it with its log: ``log`` (the tail the turn read) extended by what the turn wrote, kept for
        the next turn.  A failed key guard is the 401/403/404 that ``key`` earns; StaleGame and
        AlreadyClaimed go back to the caller, which computes the turn again on the new state."""
        try:
            self.store.apply_turn(record.stage_id, write)
        except GuardFailed:
            raise self._auth_error(self.store.get_stage(record.stage_id), key, PLAYER) from None
        if write.stage.voice_wanted:
            self._hand_over(jobs_from_json(write.stage.voice_wanted))
        after = write.stage.applied_to(record)
        if log is None:
            return after, []
        log = (log + ([write.reply_entry] if write.reply_entry is not None else []) + write.entries)[-LOG_LIMIT:]
        self.log_tails.keep(after.stage_id, after.version, log)
        return after, log

    def turn_records(self, stage_id: str, limit: int | None) -> list[TurnRecord]:
        """The stage's newest turn records (all of them with ``limit`` None), oldest first."""
        return self.store.recent_turns(stage_id, limit)

    def image(self, character: str, expression: str) -> ResolvedImage:
        """The image shown for ``character`` with ``expression`` (its fallback when it has none)."""
        return self.catalog.resolve(character, expression)

    # -- the stage's own voice (stage/voices.py) -----------------------------------
    def voice_spec(self, character: str, voice: str | None = None, authored: VoiceSpec | None = None) -> VoiceSpec:
        """How ``character`` sounds: the scenario's voice for them (``authored``), else their manifest's, else
        the default; ``voice`` (a line's own, from speak) replaces the voice and keeps the speed."""
        spec = authored or self._manifest_spec(character) or VoiceSpec()
        return VoiceSpec(voice, spec.speed) if voice else spec

    def _manifest_spec(self, character: str) -> VoiceSpec | None:
        info = self.catalog.get(character)
        return spec_of(info.voice) if info is not None else None

    def rendered_audio(self, scenario_key: str, spec: VoiceSpec, text: str) -> str | None:
        """The URL of ``text`` in ``spec`` when it was rendered ahead for the scenario (a dict lookup; the
        index is read once per process and kept like the manifests)."""
        if self.rendered is None:
            return None
        try:
            found = self.rendered.audio_for(scenario_key, spec, text)
        except Exception:  # noqa: BLE001 - a missing or broken index never holds a turn up: no audio
            log.warning("the index of lines rendered ahead for %s could not be read", scenario_key, exc_info=True)
            return None
        return self._url(found) if found else None

    def voiced(self, job: VoiceJob, audio_key: str | None, *, error: str | None = None,
               ms: float | None = None) -> bool:
        """The voice worker's outcome for one line: its audio (an object key, served as the stage serves
        assets), or None with the ``error``; kept on the line, and in the turn's debug record on a scenario
        stage.  The push sends it to the pages.  False when the line is gone or had audio of its own."""
        url = self._url(audio_key) if audio_key else None
        done = self.store.set_line_audio(job.stage, job.entry, job.created_at, job.text, url)
        if job.turn:
            self.store.add_turn_voice(job.stage, job.turn, VoiceRecord(
                entry=job.entry, character=job.character, voice=job.voice, speed=job.speed,
                source=VoiceSource.RENDERED if url else VoiceSource.FAILED, audio=url,
                ms=None if ms is None else round(ms, 1), error=error))
        return done

    def _hand_over(self, jobs: list[VoiceJob]) -> None:
        """Gives the lines to render to this process's voice worker, once their write is done (the cloud
        has none: its voice function reads them from the stream).  Never fails the write that named them."""
        if not jobs or self.voice_jobs is None:
            return
        try:
            self.voice_jobs(jobs)
        except Exception:  # noqa: BLE001 - the line is written; without its voice the page's own reads it
            log.exception("the voice worker refused %d line(s)", len(jobs))

    # -- helpers ----------------------------------------------------------------
    def _require_key(self, key: str | None) -> str:
        if not key:
            raise Unauthorized("missing key: send `Authorization: Bearer <key>`", "Authorization",
                               code="missing_key")
        return key

    def _guard(self, key: str | None, attr: str) -> Guard:
        return Guard(attr, keys.hash_key(self._require_key(key)))

    def _auth_error(self, stage: StageRecord | None, key: str | None, wanted: str | None):
        if stage is None:
            return NotFound("no such stage", "stage_id", code="stage_not_found")
        hashed = keys.hash_key(key or "")
        if wanted == AGENT and keys.same_hash(stage.player_key_hash, hashed):
            return Forbidden("this route needs the stage's agent key; a player key was sent", "Authorization",
                             code="agent_key_required")
        if wanted == PLAYER and keys.same_hash(stage.agent_key_hash, hashed):
            return Forbidden("this route needs the stage's player key; an agent key was sent", "Authorization",
                             code="player_key_required")
        return Unauthorized("wrong key for this stage", "Authorization", code="wrong_key")

    def _character_of(self, stage_id: str) -> str:
        return self._stage_characters.get(stage_id) or self._load_character(stage_id)

    def _load_character(self, stage_id: str) -> str:
        stage = self.store.get_stage(stage_id)
        if stage is None:
            raise NotFound("no such stage", "stage_id", code="stage_not_found")
        self._stage_characters[stage_id] = stage.character
        return stage.character

    def voice_of(self, character: str) -> Voice | None:
        info = self.catalog.get(character)
        if info is None or not info.voice:
            return None
        try:
            return Voice.model_validate(dict(info.voice))
        except ValueError:
            return None      # a hand-edited manifest must not break the page

    def _character_name(self, character: str) -> str:
        info = self.catalog.get(character)
        return info.name if info else character

    def _url(self, object_key: str) -> str:
        return ex.public_url(self.assets_base_url, object_key)


def _known_shape(stage_id: str) -> None:
    # Not one of our ids: no stage by that id, and no reason to ask the store.
    if not keys.is_stage_id(stage_id):
        raise NotFound("no such stage", "stage_id", code="stage_not_found")


def _audio_status(stored: str | None) -> AudioStatus | None:
    if stored == "pending":
        return "pending"
    if stored == "failed":
        return "failed"
    return None


def _handed_out(reply: ReplyRecord) -> Reply:
    return Reply(id=reply.id, text=reply.text, created_at=reply.created_at, deliveries=max(1, reply.deliveries),
                 lease_expires_at=None if reply.lease_until_ms is None else ids.iso_from_ms(reply.lease_until_ms))


def _etags(header: str) -> set[str]:
    return {part.strip().removeprefix("W/") for part in header.split(",")}


def _fingerprint(request: SpeakRequest) -> str:
    parts = [request.text, request.expression or AUTO_EXPRESSION, request.speaker]
    if request.audio is not None:
        parts.append(request.audio)
    if request.voice is not None:
        parts.append(f"voice:{request.voice}")
    body = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()
