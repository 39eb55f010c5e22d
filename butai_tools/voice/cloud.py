"""The cloud's voice function: the `current` table's stream → each write's voice jobs → the voice worker's
``handle`` → the line's audio in the bucket and on the stage (whose own stream record then pushes it).

A container-image Lambda (infra/voice/Dockerfile; docs/deploy.md says why not the GPU container), never
the API's zip.  Each stream record whose new image names jobs that its old image did not is one or more
lines to render, oldest first.  A job whose line is gone or has audio already is a no-op (a retried batch
renders again, stores nothing new), so Lambda's retries are safe; a record that fails for a transient
reason is reported as a batch item failure and retried from there.
"""
from __future__ import annotations

import logging
import os

from chalicelib.stage.voices import VoiceJob, jobs_from_json

log = logging.getLogger("butai.voice")
_worker = None


def jobs_of(records: list[dict]) -> list[tuple[str, VoiceJob]]:
    """(sequence number, job) for every job a record's write added, in stream order."""
    out = []
    for record in records:
        data = record.get("dynamodb") or {}
        new = ((data.get("NewImage") or {}).get("voice_wanted") or {}).get("S")
        old = ((data.get("OldImage") or {}).get("voice_wanted") or {}).get("S")
        if record.get("eventName") not in ("INSERT", "MODIFY") or not new or new == old:
            continue
        known = {job.entry for job in jobs_from_json(old)}
        out += [(str(data.get("SequenceNumber", "")), job) for job in jobs_from_json(new) if job.entry not in known]
    return out


def handle(event: dict, worker) -> dict:
    failures: list[dict] = []
    for sequence, job in jobs_of(event.get("Records") or []):
        if failures:
            break          # the rest waits for the retry that starts at the failed record
        try:
            worker.handle(job, strict=True)
        except Exception:  # noqa: BLE001 - the store was busy: Lambda retries from this record
            log.exception("voice job %s failed", job.entry)
            failures.append({"itemIdentifier": sequence})
    return {"batchItemFailures": failures}


def worker():
    """The function's one worker, made on its first batch: the engine loaded once per instance, sentences
    kept in the bucket (and in /tmp while the instance lives)."""
    global _worker
    if _worker is None:
        from pathlib import Path

        from chalicelib import aws, context
        from chalicelib.config import Settings

        from .engine import engine
        from .render import BucketSentences, LocalSentences, Renderer, Sentences
        from .worker import VoiceWorker
        settings = Settings.from_env(models=False)
        services = context.build(settings)
        s3 = aws.client("s3", settings)
        store = Sentences(LocalSentences(Path(os.environ.get("TMPDIR", "/tmp")) / "sentences"),
                          BucketSentences(s3, settings.bucket))
        _worker = VoiceWorker(services.stage, s3, settings.bucket, Renderer(engine(), store))
        engine().load()
    return _worker


def handler(event, context):  # noqa: ARG001 - Lambda's signature
    return handle(event, worker())
