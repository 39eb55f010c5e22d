"""The stage's own voice on the stage's side: a character's voice, the audio rendered ahead for a scenario's
lines, the lines the voice worker is asked to render after a write, and the lines it has voiced since.

- **Rendered ahead.** `butai voice render SCENARIO` renders every authored line of a scenario, uploads each
  line's audio as `butai audio upload` does (``audio/<hash>.mp3``) and writes one index per scenario,
  ``voices/lines/<scenario object name>``: ``{"lines": {line key: audio object key}}``, the line key being
  the content address of the line in its voice (``VoiceSpec.key``).  The director looks each line up in it
  (read once per process, kept ``ttl`` seconds, like the manifests): no work at turn time.
- **Rendered on demand.** A line with no audio of its own or ahead (an agent's line, a model's line, a line
  whose slots were filled) is written at once, marked ``audio_status: pending``, and the write names it in
  the stage item's ``voice_wanted`` (JSON, ``VoiceJob``s).  The voice worker renders it and stores the
  audio with ``StageService.voiced``: on the log entry, on the current line when it is still that line, and
  in the stage item's ``voiced`` (the newest few voiced lines), whose change the push sends to the pages as
  an ``audio`` message.  Locally the worker is handed the jobs in process after the write; in the cloud
  the voice function reads them from the `current` table's stream (docs/deploy.md).
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Final

from botocore.exceptions import ClientError

from ..voices import DEFAULT_SPEED, DEFAULT_VOICE, VoiceSpec

INDEX_PREFIX = "voices/lines/"
# Each sentence rendered, as FLAC, so that a template's fixed parts and repeated sentences are never
# rendered twice (by the render command, the local worker or the cloud's voice function alike).
SENTENCE_PREFIX = "voices/sentences/"
# How many voiced lines the stage item remembers (a page that missed the audio push finds older ones on the
# log entries themselves).
VOICED_KEPT = 12
PENDING: Final = "pending"
FAILED: Final = "failed"


def index_key(scenario_key: str) -> str:
    """Where the index of a scenario's lines rendered ahead lives (``scenarios/x-<hash>.json`` → …)."""
    return INDEX_PREFIX + scenario_key.rsplit("/", 1)[-1]


def sentence_key(key: str) -> str:
    return f"{SENTENCE_PREFIX}{key}.flac"


def spec_of(raw: object) -> VoiceSpec | None:
    """The voice a manifest's or a scenario's ``voice`` names ({"kokoro", "speed"}), None when it names
    none (or names one that does not exist: a hand-edited manifest must not break a stage)."""
    if not isinstance(raw, Mapping) or "kokoro" not in raw:
        return None
    try:
        return VoiceSpec(str(raw.get("kokoro") or DEFAULT_VOICE), float(raw.get("speed") or DEFAULT_SPEED))
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class VoiceJob:
    """One line for the voice worker: its log entry, who says it, the words and the voice."""
    stage: str
    entry: str
    character: str
    text: str
    voice: str
    speed: float
    created_at: str            # the entry's time: the stage's current line is this entry while it has this time
    turn: str | None = None    # the scenario turn (its reply id) whose debug record gets the outcome

    @property
    def spec(self) -> VoiceSpec:
        return VoiceSpec(self.voice, self.speed)

    def to_dict(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def jobs_json(jobs: list[VoiceJob]) -> str:
    return json.dumps([j.to_dict() for j in jobs], ensure_ascii=False, separators=(",", ":"))


def jobs_from_json(text: str | None) -> list[VoiceJob]:
    """The jobs a write named (what the stream hands the cloud's voice function); unreadable ones dropped."""
    try:
        raw = json.loads(text or "[]")
    except ValueError:
        return []
    out = []
    for item in raw if isinstance(raw, list) else []:
        try:
            out.append(VoiceJob(**{k: item[k] for k in item if k in VoiceJob.__dataclass_fields__}))
        except (TypeError, KeyError):
            continue
    return out


@dataclass(frozen=True)
class Voiced:
    """A line the voice worker has finished: its audio (an object key), or none when rendering failed."""
    entry: str
    audio: str = ""
    failed: bool = False


def voiced_from_json(text: str | None) -> list[Voiced]:
    try:
        raw = json.loads(text or "[]")
    except ValueError:
        return []
    return [Voiced(str(v[0]), str(v[1] or ""), bool(v[2])) for v in raw if isinstance(v, list) and len(v) == 3]


def voiced_json(voiced: list[Voiced]) -> str:
    return json.dumps([[v.entry, v.audio, v.failed] for v in voiced[-VOICED_KEPT:]], separators=(",", ":"))


def voiced_digest(text: str) -> str:
    """A short mark of what was voiced, for the view's version (and so the ETag): audio that arrived
    changes what a GET shows."""
    return hashlib.sha256(text.encode()).hexdigest()[:8]


class RenderedLines:
    """The index of each scenario's lines rendered ahead, read from the bucket once per ``ttl``."""

    def __init__(self, load: Callable[[str], dict | None], ttl: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self._load = load
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, tuple[float, dict[str, str]]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_s3(cls, s3_client, bucket: str, ttl: float = 60.0) -> RenderedLines:
        def load(scenario_key: str) -> dict | None:
            try:
                obj = s3_client.get_object(Bucket=bucket, Key=index_key(scenario_key))
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "AccessDenied", "404", "403"):
                    return None
                raise
            return json.loads(obj["Body"].read())
        return cls(load, ttl)

    def lines(self, scenario_key: str) -> dict[str, str]:
        now = self._clock()
        with self._lock:
            hit = self._cache.get(scenario_key)
            if hit and now - hit[0] < self._ttl:
                return hit[1]
        raw = self._load(scenario_key) if scenario_key else None
        listed = raw.get("lines") if isinstance(raw, dict) else None
        found: dict[str, str] = {str(k): str(v) for k, v in listed.items()} if isinstance(listed, dict) else {}
        with self._lock:
            self._cache[scenario_key] = (now, found)
        return found

    def audio_for(self, scenario_key: str, spec: VoiceSpec, text: str) -> str | None:
        """The object key of ``text`` said in ``spec``, when it was rendered ahead for the scenario."""
        found = self.lines(scenario_key).get(spec.key(text))
        return found if isinstance(found, str) and found else None

    def forget(self, scenario_key: str) -> None:
        with self._lock:
            self._cache.pop(scenario_key, None)
