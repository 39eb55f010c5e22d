"""Where a character's face images live, and which expression keys and character ids are valid."""
from __future__ import annotations

from urllib.parse import quote

from .. import lazyre
from ..faces import BASIC, NEUTRAL  # noqa: F401  (BASIC is part of this module's interface)

# An expression key without an image is shown as the neutral face.
FALLBACK = NEUTRAL
KEY_PATTERN = lazyre.compile(r"^[a-z][a-z0-9_]{0,31}$")
IMAGE_EXTENSIONS = ("svg", "png", "webp")
CONTENT_TYPES = {"svg": "image/svg+xml", "png": "image/png", "webp": "image/webp"}
# Character ids may be Japanese (scenario speaker ids); they only must be a
# single, printable path segment.
CHARACTER_PATTERN = lazyre.compile(r"^[^/\\\s\x00-\x1f\x7f]{1,64}$")


def is_valid_key(key: str) -> bool:
    return bool(KEY_PATTERN.fullmatch(key))


def is_valid_character(character: str) -> bool:
    return bool(CHARACTER_PATTERN.fullmatch(character)) and character not in (".", "..")


def image_key(character: str, filename: str) -> str:
    return f"characters/{character}/{filename}"


def manifest_key(character: str) -> str:
    return f"characters/{character}/manifest.json"


def public_url(base_url: str, object_key: str) -> str:
    return f"{base_url}/{quote(object_key)}"
