"""A line's voice: which audio URLs a line may carry, and uploading audio files.

A line's ``audio`` is played by the stage page, so it must be something the
page's Content-Security-Policy lets it load: a path on the stage's own
origin (``/audio/…``, written by ``butai audio upload``), an absolute URL on
that origin, or an ``https`` URL on an origin the operator listed in
``BUTAI_AUDIO_ORIGINS`` (which the policy's ``media-src`` then names too).
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from ..config import origin_of
from ..errors import ValidationFailed

AUDIO_PREFIX = "audio/"
CONTENT_TYPES = {"mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg",
                 "oga": "audio/ogg", "opus": "audio/ogg", "wav": "audio/wav", "webm": "audio/webm"}
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
# Printable ASCII without spaces, quotes, angle brackets or backslashes: a URL, nothing else.
_URL_CHARS = re.compile(r"^[!#-&(-;=?-\[\]-~]+$")


def check_audio_url(url: str, own_origins: Iterable[str], listed_origins: Iterable[str]) -> str:
    """The URL when a line may carry it, else ValidationFailed naming ``audio``."""
    if not _URL_CHARS.match(url):
        raise ValidationFailed("audio must be a URL (no spaces, quotes or control characters)", "audio")
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc:
        if not url.startswith("/") or url.startswith("//"):
            raise ValidationFailed("audio must be a path on the stage's origin starting with / "
                                   "(e.g. /audio/…) or an https URL on a listed origin", "audio")
        return url
    if "@" in parts.netloc:
        raise ValidationFailed("audio URL must not carry credentials", "audio")
    origin = origin_of(url)
    own = {o.lower() for o in own_origins if o}
    listed = {o.lower() for o in listed_origins}
    if origin is not None and (origin in own or (parts.scheme == "https" and origin in listed)):
        return url
    raise ValidationFailed(f"audio from {origin or parts.scheme + ':'} is not allowed: use the stage's own origin "
                           "(butai audio upload) or an https origin listed in BUTAI_AUDIO_ORIGINS", "audio")


def audio_key(data: bytes, extension: str) -> str:
    """Content-addressed, so an uploaded file never changes under a line that plays it."""
    return f"{AUDIO_PREFIX}{hashlib.sha256(data).hexdigest()[:24]}.{extension}"


def upload_audio(s3, bucket: str, path: Path) -> str:
    extension = path.suffix.lstrip(".").lower()
    if extension not in CONTENT_TYPES:
        raise ValueError(f"{path.name}: not an audio file ({', '.join(sorted(CONTENT_TYPES))})")
    data = path.read_bytes()
    if not data:
        raise ValueError(f"{path.name}: empty file")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{path.name}: {len(data)} bytes; the limit is {MAX_UPLOAD_BYTES}")
    key = audio_key(data, extension)
    s3.put_object(Bucket=bucket, Key=key, Body=data, ContentType=CONTENT_TYPES[extension],
                  CacheControl="public, max-age=31536000, immutable")
    return key
