"""Which expression images each character has, read from S3 manifests.

A manifest (``characters/{id}/manifest.json``) is written by
``butai images upload`` next to the images, so resolving an expression never
lists the bucket; manifests are cached per process for ``manifest_ttl``.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from botocore.exceptions import ClientError

from . import face_images as ex


@dataclass(frozen=True)
class Character:
    id: str
    name: str
    images: Mapping[str, str]  # expression key -> file name
    voice: Mapping[str, object] | None = None   # speech synthesis settings for the page (pitch, rate, lang)


@dataclass(frozen=True)
class ResolvedImage:
    expression: str      # the expression shown
    asked: str           # the expression asked for
    image_key: str       # object key of the shown image
    fallback_key: str    # object key of the character's neutral image


class CharacterCatalog:
    def __init__(self, load_manifest: Callable[[str], dict | None], ttl: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self._load = load_manifest
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, tuple[float, Character | None]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_s3(cls, s3_client, bucket: str, ttl: float = 60.0) -> CharacterCatalog:
        def load(character: str) -> dict | None:
            try:
                obj = s3_client.get_object(Bucket=bucket, Key=ex.manifest_key(character))
            except ClientError as exc:
                # Without s3:ListBucket, S3 answers a missing key with AccessDenied.
                if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "AccessDenied", "404", "403"):
                    return None
                raise
            return json.loads(obj["Body"].read())
        return cls(load, ttl)

    def get(self, character: str) -> Character | None:
        now = self._clock()
        with self._lock:
            hit = self._cache.get(character)
            if hit and now - hit[0] < self._ttl:
                return hit[1]
        raw = self._load(character) if ex.is_valid_character(character) else None
        found = None
        if raw:
            images = {k: v for k, v in raw.get("expressions", {}).items() if ex.is_valid_key(k)}
            voice = raw.get("voice") if isinstance(raw.get("voice"), dict) else None
            found = Character(id=character, name=raw.get("name") or character, images=images, voice=voice)
        with self._lock:
            self._cache[character] = (now, found)
        return found

    def forget(self, character: str) -> None:
        with self._lock:
            self._cache.pop(character, None)

    def resolve(self, character: str, asked: str) -> ResolvedImage:
        info = self.get(character)
        images = info.images if info else {}
        fallback_file = images.get(ex.FALLBACK, f"{ex.FALLBACK}.svg")
        if asked in images:
            shown, shown_file = asked, images[asked]
        else:
            shown, shown_file = ex.FALLBACK, fallback_file
        return ResolvedImage(expression=shown, asked=asked,
                             image_key=ex.image_key(character, shown_file),
                             fallback_key=ex.image_key(character, fallback_file))
