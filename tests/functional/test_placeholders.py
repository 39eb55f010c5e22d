"""Placeholder portraits on an S3 bucket (moto): one per expression a character uses, real art beside the
scenario uploaded instead, real art already in the bucket never overwritten, and placeholders redrawn when a
scenario gains an expression."""
from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from butai_tools.stage.placeholders import PLACEHOLDER_FLAG, art_search_path, ensure_portraits, portrait_svg
from chalicelib.stage import face_images as ex

BUCKET = "butai-test-assets"


@pytest.fixture
def s3(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def manifest(s3, character: str) -> dict:
    return json.loads(s3.get_object(Bucket=BUCKET, Key=ex.manifest_key(character))["Body"].read())


def keys(s3, character: str) -> set[str]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=ex.image_key(character, ""))
    return {item["Key"].rsplit("/", 1)[1] for item in listed.get("Contents", [])}


def test_one_placeholder_per_expression_used_and_neutral(s3, tmp_path):
    done = ensure_portraits(s3, BUCKET, [("甲", "甲さん", ["smile", "angry"])], [tmp_path])
    assert done.generated == ("甲",) and not done.uploaded and not done.kept
    stored = manifest(s3, "甲")
    assert stored[PLACEHOLDER_FLAG] is True and stored["name"] == "甲さん"
    assert stored["expressions"] == {"neutral": "neutral.svg", "smile": "smile.svg", "angry": "angry.svg"}
    assert keys(s3, "甲") == {"neutral.svg", "smile.svg", "angry.svg", "manifest.json"}
    smile = s3.get_object(Bucket=BUCKET, Key=ex.image_key("甲", "smile.svg"))
    assert smile["ContentType"] == "image/svg+xml"
    assert smile["Body"].read().decode() == portrait_svg("甲", "甲さん", "smile")     # its name and face key on it


def test_a_scenario_that_gains_an_expression_gets_its_face(s3, tmp_path):
    ensure_portraits(s3, BUCKET, [("甲", "甲", ["smile"])], [tmp_path])
    ensure_portraits(s3, BUCKET, [("甲", "甲", ["smile", "sad"])], [tmp_path])
    assert set(manifest(s3, "甲")["expressions"]) == {"neutral", "smile", "sad"}


def test_art_beside_the_scenario_is_uploaded_instead(s3, tmp_path):
    scenario = tmp_path / "mine.json"
    art = tmp_path / "characters" / "乙"
    art.mkdir(parents=True)
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/></svg>'
    for face in ("neutral", "smile"):
        (art / f"{face}.svg").write_text(svg, encoding="utf-8")
    done = ensure_portraits(s3, BUCKET, [("乙", "乙", ["smile"]), ("甲", "甲", [])],
                            art_search_path(scenario, tmp_path / "nothing-here"))
    assert done.uploaded == ("乙",) and done.generated == ("甲",)
    assert not manifest(s3, "乙").get(PLACEHOLDER_FLAG)
    assert s3.get_object(Bucket=BUCKET, Key=ex.image_key("乙", "smile.svg"))["Body"].read().decode() == svg


def test_real_art_in_the_bucket_is_never_overwritten(s3, tmp_path):
    real = {"id": "丙", "name": "丙", "expressions": {"neutral": "neutral.svg"}}
    s3.put_object(Bucket=BUCKET, Key=ex.manifest_key("丙"), Body=json.dumps(real).encode())
    s3.put_object(Bucket=BUCKET, Key=ex.image_key("丙", "neutral.svg"), Body=b"<svg>real</svg>")
    done = ensure_portraits(s3, BUCKET, [("丙", "丙", ["smile"])], [tmp_path])
    assert done.kept == ("丙",) and not done.generated
    assert manifest(s3, "丙") == real
    assert s3.get_object(Bucket=BUCKET, Key=ex.image_key("丙", "neutral.svg"))["Body"].read() == b"<svg>real</svg>"
