"""Uploading a character's expression images and the stage page to S3."""
from __future__ import annotations

import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from chalicelib.stage import face_images as ex
from chalicelib.stage.audio import read_upload
from chalicelib.stage.models import Voice

# The stage page's files, served next to the images.
PAGE_FILES = ("index.html", "app.js", "voice.js", "style.css")
# An expression image (or the folder's manifest) larger than this is no face.
IMAGE_MAX_BYTES = 5 * 1024 * 1024


class ImageSetError(ValueError):
    pass


@dataclass(frozen=True)
class ImageSet:
    character: str
    name: str
    files: dict[str, Path]   # expression key -> file
    voice: dict | None = None   # the manifest's speech settings (pitch, rate, lang), carried as given


def read_image_dir(directory: Path, character: str, name: str | None = None) -> ImageSet:
    """Validates a folder of ``<expression>.<svg|png|webp>`` files."""
    if not ex.is_valid_character(character):
        raise ImageSetError(f"invalid character id {character!r}: one path segment, 1-64 printable characters")
    if not directory.is_dir():
        raise ImageSetError(f"{directory}: not a folder")
    files: dict[str, Path] = {}
    problems = []
    for path in sorted(directory.iterdir()):
        if path.name == "manifest.json" or path.name.startswith("."):
            continue
        if path.is_symlink() or not path.is_file():
            # A link is never followed: it could publish any file the user can read (a key file named
            # neutral.svg).  The upload reads each file again without following links (read_upload).
            problems.append(f"{path.name}: {'a symbolic link' if path.is_symlink() else 'not a regular file'}; "
                            "give the image file itself")
            continue
        stem, _, ext = path.name.rpartition(".")
        if ext.lower() not in ex.IMAGE_EXTENSIONS:
            problems.append(f"{path.name}: not an image ({', '.join(ex.IMAGE_EXTENSIONS)})")
            continue
        if not ex.is_valid_key(stem):
            problems.append(f"{path.name}: {stem!r} is not an expression key "
                            f"(lower-case letters, digits and _, starting with a letter, at most 32)")
            continue
        if stem in files:
            problems.append(f"{path.name}: expression {stem!r} given twice")
            continue
        files[stem] = path
    if ex.FALLBACK not in files:
        problems.append(f"no {ex.FALLBACK} image: every character needs one, it is the fallback")
    if problems:
        raise ImageSetError("; ".join(problems))
    manifest = directory / "manifest.json"
    try:
        given = json.loads(read_upload(manifest, IMAGE_MAX_BYTES)) \
            if manifest.exists() or manifest.is_symlink() else {}
    except OSError as exc:
        raise ImageSetError(f"manifest.json: {exc.strerror or exc}") from None
    except ValueError as exc:     # a link, not a regular file, too large, or not JSON
        raise ImageSetError(str(exc) if str(exc).startswith("manifest.json") else f"manifest.json: {exc}") from None
    voice = given.get("voice")
    if voice is not None:
        try:
            voice = Voice.model_validate(voice).model_dump(exclude_none=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(["voice", *(str(p) for p in first["loc"])])
            raise ImageSetError(f"manifest.json: {field}: {first['msg']}") from None
    return ImageSet(character=character, name=name or given.get("name") or character, files=files, voice=voice)


def upload_image_set(s3, bucket: str, images: ImageSet) -> list[str]:
    keys = []
    for expression, path in images.files.items():
        ext = path.suffix.lstrip(".").lower()
        key = ex.image_key(images.character, f"{expression}.{ext}")
        try:
            body = read_upload(path, IMAGE_MAX_BYTES)
        except OSError as exc:
            raise ImageSetError(f"{path.name}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ImageSetError(str(exc)) from None
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=ex.CONTENT_TYPES[ext],
                      CacheControl="public, max-age=300")
        keys.append(key)
    manifest = {"id": images.character, "name": images.name,
                "expressions": {k: f"{k}.{p.suffix.lstrip('.').lower()}" for k, p in images.files.items()}}
    if images.voice:
        manifest["voice"] = images.voice
    # The manifest goes last: a reader never sees an expression whose image is not there yet.
    s3.put_object(Bucket=bucket, Key=ex.manifest_key(images.character),
                  Body=json.dumps(manifest, ensure_ascii=False, indent=1).encode(),
                  ContentType="application/json", CacheControl="no-cache")
    return keys


def upload_page(s3, bucket: str, static_dir: Path) -> list[str]:
    keys = []
    for name in PAGE_FILES:
        path = static_dir / name
        if path.exists():
            ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if ctype.startswith("text/") or ctype.endswith("javascript"):
                ctype += "; charset=utf-8"
            s3.put_object(Bucket=bucket, Key=name, Body=path.read_bytes(), ContentType=ctype,
                          CacheControl="no-cache")
            keys.append(name)
    return keys


def upload_all_characters(s3, bucket: str, characters_dir: Path) -> list[str]:
    done = []
    for sub in sorted(p for p in characters_dir.iterdir() if p.is_dir()):
        upload_image_set(s3, bucket, read_image_dir(sub, sub.name))
        done.append(sub.name)
    return done
