"""A line's voice: which audio URLs a line may carry, and uploading audio files.

A line's ``audio`` is played by the stage page, so it must be something the
page's Content-Security-Policy lets it load: a voice on the stage's own origin
(``/audio/<name>.<audio extension>``, written by ``butai audio upload``; as a
path or an absolute URL on that origin), or an ``https`` URL on an origin the
operator listed in ``BUTAI_AUDIO_ORIGINS`` (which the policy's ``media-src``
then names too).  Nothing else of the own origin (the page, its scripts,
``/stages/…``) is a voice.

Uploads read the file itself, never through a symbolic link, and take its type
from its first bytes (the extension must agree).
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from .. import lazyre
from ..config import origin_of
from ..errors import ValidationFailed

AUDIO_PREFIX = "audio/"
CONTENT_TYPES = {"mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "ogg": "audio/ogg",
                 "oga": "audio/ogg", "opus": "audio/ogg", "wav": "audio/wav", "webm": "audio/webm"}
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
# Printable ASCII without spaces, quotes, angle brackets or backslashes: a URL, nothing else.
_URL_CHARS = lazyre.compile(r"^[!#-&(-;=?-\[\]-~]+$")
# A voice on the stage's own origin: under audio/, an audio extension, an optional query (no fragment).
# The OpenAPI document publishes the same pattern for `audio` (stage/models.py).
AUDIO_PATH_PATTERN = (r"^/" + AUDIO_PREFIX + r"[A-Za-z0-9._-]+\.(?:" + "|".join(sorted(CONTENT_TYPES))
                      + r")(?:\?[!$-&(-;=?-\[\]-~]*)?$")
_AUDIO_PATH = lazyre.compile(AUDIO_PATH_PATTERN)


def check_audio_url(url: str, own_origins: Iterable[str], listed_origins: Iterable[str]) -> str:
    """The URL when a line may carry it, else ValidationFailed naming ``audio``."""
    # Whole matches (`$` alone would let a final line break through).
    if not _URL_CHARS.fullmatch(url):
        raise ValidationFailed("audio must be a URL (no spaces, quotes or control characters)", "audio")
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc:
        if not url.startswith("/") or url.startswith("//"):
            raise ValidationFailed("audio must be a path on the stage's origin starting with / "
                                   "(e.g. /audio/…) or an https URL on a listed origin", "audio")
        _require_voice_path(url)
        return url
    if "@" in parts.netloc:
        raise ValidationFailed("audio URL must not carry credentials", "audio")
    origin = origin_of(url)
    own = {o.lower() for o in own_origins if o}
    listed = {o.lower() for o in listed_origins}
    if origin is not None and origin in own:
        _require_voice_path(url[len(origin):] or "/")
        return url
    if origin is not None and parts.scheme == "https" and origin in listed:
        return url
    raise ValidationFailed(f"audio from {origin or parts.scheme + ':'} is not allowed: use the stage's own origin "
                           "(butai audio upload) or an https origin listed in BUTAI_AUDIO_ORIGINS", "audio")


def _require_voice_path(path: str) -> None:
    if not _AUDIO_PATH.fullmatch(path):
        raise ValidationFailed(f"audio on the stage's own origin must be an uploaded voice: /{AUDIO_PREFIX}<name>."
                               f"<{'|'.join(sorted(CONTENT_TYPES))}> (butai audio upload)", "audio")


def sniff_audio(data: bytes) -> str | None:
    """The audio format the bytes are in, by their signature (None: not one of ours)."""
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06):
        return "mp3"                          # an ID3 tag, or an MPEG audio frame (layer bits set)
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0:
        return "aac"                          # ADTS (MPEG-4 AAC): sync word, layer 00
    if data[4:8] == b"ftyp":
        return "m4a"                          # an MP4 container
    if data[:4] == b"OggS":
        return "opus" if b"OpusHead" in data[:64] else "ogg"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[:4] == b"\x1aE\xdf\xa3":
        return "webm"                         # Matroska/WebM (EBML)
    return None


# Extensions that name the same container as the one sniffed.
_SAME_FORMAT = {"oga": "ogg", "opus": "ogg", "ogg": "ogg"}


def audio_key(data: bytes, extension: str) -> str:
    """Content-addressed, so an uploaded file never changes under a line that plays it."""
    return f"{AUDIO_PREFIX}{hashlib.sha256(data).hexdigest()[:24]}.{extension}"


def read_upload(path: Path, limit: int | None = None) -> bytes:
    """The file's bytes: a regular file opened without following a symbolic link (a link could hand over any
    file the user can read, e.g. a key file named `voice.mp3`), at most ``limit`` bytes.  `butai images
    upload` reads the expression images the same way."""
    limit = MAX_UPLOAD_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{path.name}: a symbolic link; upload the file it points to") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"{path.name}: not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path.name}: larger than the limit of {limit} bytes")
    return data


def upload_audio(s3, bucket: str, path: Path) -> str:
    extension = path.suffix.lstrip(".").lower()
    if extension not in CONTENT_TYPES:
        raise ValueError(f"{path.name}: not an audio file ({', '.join(sorted(CONTENT_TYPES))})")
    data = read_upload(path)
    if not data:
        raise ValueError(f"{path.name}: empty file")
    sniffed = sniff_audio(data)
    if sniffed is None:
        raise ValueError(f"{path.name}: its content is not audio ({', '.join(sorted(CONTENT_TYPES))})")
    if _SAME_FORMAT.get(sniffed, sniffed) != _SAME_FORMAT.get(extension, extension) and \
            {sniffed, extension} != {"m4a", "aac"}:
        raise ValueError(f"{path.name}: its content is {sniffed}, not {extension}")
    return put_audio(s3, bucket, data, extension)


def put_audio(s3, bucket: str, data: bytes, extension: str) -> str:
    """Stores checked audio under its content address (``audio/<hash>.<ext>``, cached for good) and returns
    the key: `butai audio upload` and the stage's own voice store lines alike."""
    key = audio_key(data, extension)
    s3.put_object(Bucket=bucket, Key=key, Body=data, ContentType=CONTENT_TYPES[extension],
                  CacheControl="public, max-age=31536000, immutable")
    return key
