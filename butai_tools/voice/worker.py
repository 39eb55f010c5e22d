"""The voice worker: renders the lines a write named (``VoiceJob``s) after the write, never before it.

The line is on the page already; the worker renders it (sentences kept from before are reused), stores
the MP3 as `butai audio upload` does and hands the outcome to ``StageService.voiced``, whose write the
push sends to the pages as an ``audio`` message.  A line it cannot render keeps showing and is read by
the page's own voice, the failure kept on the line and in the turn's debug record.  Jobs are done one at a
time, oldest first, so a turn's lines get their audio in the order they are said.

The local run starts one in process (`make run VOICE=1`); the cloud's voice function runs the same
``handle`` on the jobs it reads from the `current` table's stream (docs/deploy.md).
"""
from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from dataclasses import dataclass

from chalicelib.stage.audio import put_audio
from chalicelib.stage.service import StageService
from chalicelib.stage.voices import VoiceJob
from chalicelib.voices import AUDIO_EXTENSION

from .render import Rendered, Renderer

log = logging.getLogger("butai.voice")
# Lines whose audio was just stored, by their content address: the same line said again (an agent's
# greeting) is neither encoded nor stored twice.
_KNOWN_LINES = 512


@dataclass
class Outcome:
    job: VoiceJob
    audio_key: str | None
    error: str | None
    ms: float                         # from the job's arrival here to its audio stored
    rendered: Rendered | None = None
    queued_at: float = 0.0
    done_at: float = 0.0


class VoiceWorker:
    def __init__(self, stages: StageService, s3, bucket: str, renderer: Renderer):
        self.stages = stages
        self.s3 = s3
        self.bucket = bucket
        self.renderer = renderer
        self._queue: queue.Queue[tuple[VoiceJob, float] | None] = queue.Queue()
        self._known: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._thread = threading.Thread(target=self._run, name="voice", daemon=True)
        self.outcomes: collections.deque[Outcome] = collections.deque(maxlen=1024)
        self._done = threading.Condition()

    def start(self) -> VoiceWorker:
        self._thread.start()
        return self

    def _load(self) -> None:
        # Loaded before the first line arrives (0.8 s; the first time also joining the model's parts).
        try:
            self.renderer.engine.load()
        except Exception:  # noqa: BLE001 - each job then fails alike and says why
            log.exception("the voice model could not be loaded")

    def stop(self, timeout: float = 5.0) -> None:
        self._queue.put(None)
        self._thread.join(timeout=timeout)

    def submit(self, jobs: list[VoiceJob]) -> None:
        """Takes the jobs and returns at once (the caller is a request that must not wait)."""
        now = time.perf_counter()
        for job in jobs:
            self._queue.put((job, now))

    def wait_for(self, entry: str, timeout: float) -> Outcome | None:
        """The outcome for a log entry, waiting for it up to ``timeout`` seconds (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        with self._done:
            while True:
                found = next((o for o in self.outcomes if o.job.entry == entry), None)
                left = deadline - time.monotonic()
                if found is not None or left <= 0:
                    return found
                self._done.wait(left)

    def _run(self) -> None:
        self._load()
        while True:
            item = self._queue.get()
            if item is None:
                return
            job, queued = item
            outcome = self.handle(job, queued)
            with self._done:
                self.outcomes.append(outcome)
                self._done.notify_all()

    def handle(self, job: VoiceJob, queued: float | None = None, *, strict: bool = False) -> Outcome:
        """Renders one line and stores the outcome.  ``strict``: storage trouble is raised (the cloud's
        function lets Lambda retry the record) rather than logged."""
        queued = time.perf_counter() if queued is None else queued
        rendered = None
        try:
            key = self._known.get(job.spec.key(job.text))
            if key is None:
                data, rendered = self.renderer.mp3(job.text, job.spec)
                key = put_audio(self.s3, self.bucket, data, AUDIO_EXTENSION)
                self._remember(job.spec.key(job.text), key)
            error = None
        except Exception as exc:  # noqa: BLE001 - a line that cannot be rendered still shows
            log.warning("line %s of %s could not be voiced: %s", job.entry, job.stage, exc)
            key, error = None, f"{type(exc).__name__}: {str(exc)[:300]}"
        ms = (time.perf_counter() - queued) * 1000
        try:
            self.stages.voiced(job, key, error=error, ms=ms)
        except Exception:  # noqa: BLE001 - the page's own voice reads the line; the next job goes on
            if strict:
                raise
            log.exception("the voice of line %s could not be stored", job.entry)
        return Outcome(job, key, error, ms, rendered, queued, time.perf_counter())

    def _remember(self, line_key: str, audio_key: str) -> None:
        self._known[line_key] = audio_key
        while len(self._known) > _KNOWN_LINES:
            self._known.popitem(last=False)


def start_local_worker(stages: StageService, s3, bucket: str, state_dir) -> VoiceWorker:
    """The local run's worker: sentences kept in the state folder, the API's own stage service (its writes
    start the push like any other), handed each write's jobs in process."""
    from pathlib import Path

    from .engine import engine, require_packages
    from .render import LocalSentences
    require_packages()
    worker = VoiceWorker(stages, s3, bucket, Renderer(engine(), LocalSentences(Path(state_dir) / "voice" / "sentences")))
    stages.voice_jobs = worker.submit
    return worker.start()
