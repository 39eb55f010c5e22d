"""Placeholder portraits: a scenario plays before any art exists.

A character of a scenario with no uploaded images gets generated ones, one per expression the character
uses, so `butai stage create --scenario` never refuses a scenario for want of art (Ren'Py's `Placeholder`
images are the model).  Each portrait is a plain bust in a colour of the character's own (the same id
always gives the same colour), a face drawn for the expression, and the character's name and the
expression key written under it, so an author sees at once which face the stage asked for.

The manifest of a generated set says `"placeholder": true`; uploading real art (`butai images upload`)
replaces it, and a set of real art is never overwritten by placeholders.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from chalicelib.stage import face_images as ex

from .images import ImageSet, read_image_dir, upload_image_set

WIDTH, HEIGHT = 480, 600
PLACEHOLDER_FLAG = "placeholder"

# Each expression's face as (brows, eyes, mouth, extra) SVG fragments, drawn on a face centred at
# (240, 250).  Keys outside this table get the neutral face; their key is still written under it.
_EYES_DOT = '<circle cx="205" cy="250" r="9"/><circle cx="275" cy="250" r="9"/>'
_EYES_ARC = ('<path d="M192,254 Q205,238 218,254" fill="none" stroke-width="6"/>'
             '<path d="M262,254 Q275,238 288,254" fill="none" stroke-width="6"/>')
_EYES_ROUND = ('<circle cx="205" cy="248" r="15" fill="#fff" stroke-width="5"/><circle cx="205" cy="248" r="6"/>'
               '<circle cx="275" cy="248" r="15" fill="#fff" stroke-width="5"/><circle cx="275" cy="248" r="6"/>')
_EYES_CLOSED = ('<path d="M192,250 L218,250" stroke-width="6"/><path d="M262,250 L288,250" stroke-width="6"/>')
_FACES: dict[str, tuple[str, str, str, str]] = {
    "neutral": ("", _EYES_DOT, '<path d="M215,305 L265,305" stroke-width="6"/>', ""),
    "smile": ("", _EYES_ARC, '<path d="M205,295 Q240,330 275,295" fill="none" stroke-width="6"/>', ""),
    "troubled": ('<path d="M190,222 L220,230" stroke-width="6"/><path d="M290,222 L260,230" stroke-width="6"/>',
                 _EYES_DOT, '<path d="M212,312 Q226,300 240,310 Q254,320 268,306" fill="none" stroke-width="6"/>',
                 ""),
    "surprised": ('<path d="M190,215 Q205,205 220,215" fill="none" stroke-width="5"/>'
                  '<path d="M260,215 Q275,205 290,215" fill="none" stroke-width="5"/>',
                  _EYES_ROUND, '<ellipse cx="240" cy="310" rx="14" ry="18" fill="#5a2a2a"/>', ""),
    "embarrassed": ("", _EYES_ARC, '<path d="M222,302 Q240,314 258,302" fill="none" stroke-width="5"/>',
                    '<ellipse cx="188" cy="285" rx="20" ry="10" fill="#f29a9a" stroke="none"/>'
                    '<ellipse cx="292" cy="285" rx="20" ry="10" fill="#f29a9a" stroke="none"/>'),
    "angry": ('<path d="M188,228 L222,240" stroke-width="7"/><path d="M292,228 L258,240" stroke-width="7"/>',
              _EYES_DOT, '<path d="M210,315 Q240,295 270,315" fill="none" stroke-width="6"/>', ""),
    "determined": ('<path d="M188,230 L222,236" stroke-width="7"/><path d="M292,230 L258,236" stroke-width="7"/>',
                   _EYES_DOT, '<path d="M218,306 L262,306" stroke-width="8"/>', ""),
    "sad": ('<path d="M190,232 L220,224" stroke-width="6"/><path d="M290,232 L260,224" stroke-width="6"/>',
            _EYES_DOT, '<path d="M210,315 Q240,295 270,315" fill="none" stroke-width="6"/>',
            '<path d="M205,265 Q200,280 205,288 Q212,280 205,265Z" fill="#7cc0ff" stroke="none"/>'),
    "sleepy": ("", _EYES_CLOSED, '<ellipse cx="240" cy="308" rx="9" ry="6" fill="#5a2a2a"/>', ""),
}


def _hue(character: str) -> int:
    return int(hashlib.sha256(character.encode("utf-8")).hexdigest()[:4], 16) % 360


def portrait_svg(character: str, name: str, expression: str) -> str:
    """One placeholder portrait: the same character always has the same colour."""
    hue = _hue(character)
    brows, eyes, mouth, extra = _FACES.get(expression, _FACES[ex.FALLBACK])
    label = escape(f"{name} · {expression}")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
        f"<title>{label}</title>"
        f'<rect width="{WIDTH}" height="{HEIGHT}" rx="28" fill="hsl({hue},35%,88%)"/>'
        f'<path d="M70,600 Q80,420 240,400 Q400,420 410,600Z" fill="hsl({hue},45%,45%)"/>'
        f'<circle cx="240" cy="255" r="115" fill="#f6dcc4"/>'
        f'<path d="M125,250 Q130,120 240,118 Q350,120 355,250 Q330,170 240,168 Q150,170 125,250Z" '
        f'fill="hsl({hue},40%,25%)"/>'
        f'<g stroke="#3a2a22" fill="#3a2a22" stroke-linecap="round">{brows}{eyes}{mouth}{extra}</g>'
        f'<rect x="40" y="520" width="400" height="56" rx="14" fill="#ffffffcc"/>'
        f'<text x="240" y="557" text-anchor="middle" font-family="sans-serif" font-size="26" '
        f'fill="#333">{label}</text>'
        "</svg>"
    )


@dataclass(frozen=True)
class Portraits:
    """What `ensure_portraits` did for each character: uploaded real art, generated placeholders, or kept
    what the bucket already had."""
    uploaded: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


def art_folder(character: str, search: Iterable[Path]) -> Path | None:
    """The first folder of real art for `character` among `search` (each holds one folder per character)."""
    for base in search:
        folder = base / character
        if folder.is_dir() and not folder.is_symlink():
            return folder
    return None


def art_search_path(scenario_file: Path | None, static_characters: Path) -> list[Path]:
    """Where real art for a scenario's characters is looked for: `characters/` beside the scenario file,
    then the project's own `static/characters/`."""
    found = []
    if scenario_file is not None:
        found.append(scenario_file.resolve().parent / "characters")
    found.append(static_characters)
    return found


def upload_placeholders(s3, bucket: str, character: str, name: str, expressions: Iterable[str]) -> list[str]:
    keys = []
    wanted = list(dict.fromkeys([ex.FALLBACK, *expressions]))
    for expression in wanted:
        key = ex.image_key(character, f"{expression}.svg")
        s3.put_object(Bucket=bucket, Key=key, Body=portrait_svg(character, name, expression).encode("utf-8"),
                      ContentType=ex.CONTENT_TYPES["svg"], CacheControl="public, max-age=300")
        keys.append(key)
    manifest = {"id": character, "name": name, PLACEHOLDER_FLAG: True,
                "expressions": {k: f"{k}.svg" for k in wanted}}
    # The manifest goes last, as for real art: a reader never sees a face whose image is not there yet.
    s3.put_object(Bucket=bucket, Key=ex.manifest_key(character),
                  Body=json.dumps(manifest, ensure_ascii=False, indent=1).encode(),
                  ContentType="application/json", CacheControl="no-cache")
    return keys


def _stored_manifest(s3, bucket: str, character: str) -> dict | None:
    from botocore.exceptions import ClientError
    try:
        body = s3.get_object(Bucket=bucket, Key=ex.manifest_key(character))["Body"].read()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "AccessDenied", "404", "403"):
            return None
        raise
    return json.loads(body)


def ensure_portraits(s3, bucket: str, characters: Iterable[tuple[str, str, Iterable[str]]],
                     search: Iterable[Path]) -> Portraits:
    """Every character (id, display name, expression keys) has images in the bucket afterwards: real art
    already uploaded is kept; else real art found in `search` is uploaded; else placeholders are generated
    (again each time, so a scenario that gained an expression gets its face)."""
    search = list(search)
    uploaded, generated, kept = [], [], []
    for character, name, expressions in characters:
        stored = _stored_manifest(s3, bucket, character)
        if stored is not None and not stored.get(PLACEHOLDER_FLAG):
            kept.append(character)
            continue
        folder = art_folder(character, search)
        if folder is not None:
            images: ImageSet = read_image_dir(folder, character, name)
            upload_image_set(s3, bucket, images)
            uploaded.append(character)
            continue
        upload_placeholders(s3, bucket, character, name, expressions)
        generated.append(character)
    return Portraits(tuple(uploaded), tuple(generated), tuple(kept))


def scenario_cast(scenario) -> list[tuple[str, str, list[str]]]:
    """(id, display name, expression keys) of every character of a compiled scenario."""
    return [(cid, c.name, list(c.expressions)) for cid, c in scenario.characters.items()]


def publish_scenario(services, settings, path: Path, static_characters: Path) -> tuple[str, Portraits]:
    """A scenario file put in the stage's library, its characters' faces in the bucket first (their art
    where some is found, else placeholders): (the scenario's key, what was done for the faces).  A scenario
    that does not load is refused before anything is written (ScenarioError)."""
    from chalicelib import aws
    from chalicelib.scenario import load_scenario_text

    scenario = load_scenario_text(path.read_text(encoding="utf-8"), source=path.name)
    portraits = ensure_portraits(aws.client("s3", settings), settings.bucket, scenario_cast(scenario),
                                 art_search_path(path, static_characters))
    for cid in scenario.characters:
        services.stage.catalog.forget(cid)     # a face this process looked up before is there now
    return services.director.library.put(path), portraits
