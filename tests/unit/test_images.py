"""Expression image sets: validation, upload, contact sheet."""
import json

import pytest

from butai_tools.cli import main
from butai_tools.stage import images
from chalicelib import aws
from chalicelib.stage import face_images as ex
from tests.conftest import ROOT

SVG = b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/></svg>'


def make_dir(tmp_path, names):
    for name in names:
        (tmp_path / name).write_bytes(SVG)
    return tmp_path


def test_default_character_has_the_basic_set_each_different():
    found = images.read_image_dir(ROOT / "static/characters/hiyori", "hiyori")
    assert set(found.files) == set(ex.BASIC)
    assert found.name == "ひより"
    bodies = {path.read_bytes() for path in found.files.values()}
    assert len(bodies) == len(ex.BASIC)  # visibly different files, not copies


@pytest.mark.parametrize("character", ["赤尾妙子", "神楽坂葵"])
def test_reference_characters_cover_the_scenario_expressions(character):
    scenario = json.loads((ROOT / "scenarios/chinoike.json").read_text(encoding="utf-8"))
    wanted = next(c["expressions"] for c in scenario["characters"] if c["id"] == character)
    found = images.read_image_dir(ROOT / "static/characters" / character, character)
    assert set(wanted) <= set(found.files)


@pytest.mark.parametrize("names,problem", [
    (["smile.svg"], "no neutral image"),
    (["neutral.svg", "Smile.svg"], "'Smile' is not an expression key"),
    (["neutral.svg", "smile.gif"], "smile.gif: not an image"),
    (["neutral.svg", "smile.svg", "smile.png"], "given twice"),
])
def test_upload_rejects_bad_image_sets(tmp_path, names, problem):
    with pytest.raises(images.ImageSetError) as err:
        images.read_image_dir(make_dir(tmp_path, names), "c1")
    assert problem in str(err.value)


def test_bad_character_id(tmp_path):
    with pytest.raises(images.ImageSetError):
        images.read_image_dir(make_dir(tmp_path, ["neutral.svg"]), "a/b")


def test_upload_writes_images_then_manifest(aws_settings, tmp_path):
    s3 = aws.client("s3", aws_settings)
    image_set = images.read_image_dir(make_dir(tmp_path, ["neutral.svg", "smile.png"]), "c1", "シーワン")
    images.upload_image_set(s3, aws_settings.bucket, image_set)
    manifest = json.loads(s3.get_object(Bucket=aws_settings.bucket, Key="characters/c1/manifest.json")["Body"].read())
    assert manifest == {"id": "c1", "name": "シーワン", "expressions": {"neutral": "neutral.svg", "smile": "smile.png"}}
    head = s3.head_object(Bucket=aws_settings.bucket, Key="characters/c1/smile.png")
    assert head["ContentType"] == "image/png"


def test_contact_sheet_has_every_expression_side_by_side(tmp_path, capsys):
    out = tmp_path / "sheet.html"
    assert main(["images", "sheet", "--character", "hiyori", "--dir", str(ROOT / "static/characters/hiyori"),
                 "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.count("<figure>") == len(ex.BASIC)
    assert html.index(">neutral<") < html.index(">smile<") < html.index(">determined<")
    assert "data:image/svg+xml;base64," in html


def test_upload_command_reports_bad_names(tmp_path, capsys):
    assert main(["images", "upload", str(make_dir(tmp_path, ["smile.svg"])), "--character", "c1"]) == 1
    assert "no neutral image" in capsys.readouterr().err


def _secret(tmp_path):
    secret = tmp_path / "local.json"
    secret.write_text('{"agent_key": "bka_secret"}')
    return secret


def test_a_symbolic_link_among_the_images_is_refused_not_followed(tmp_path, capsys):
    """A link named neutral.svg to .butai/local.json would publish the keys: refused, nothing uploaded."""
    folder = tmp_path / "faces"
    folder.mkdir()
    (folder / "smile.svg").write_bytes(SVG)
    (folder / "neutral.svg").symlink_to(_secret(tmp_path))
    with pytest.raises(images.ImageSetError, match="neutral.svg: a symbolic link"):
        images.read_image_dir(folder, "c1")
    # Even a link to a real image: the file itself must be given.
    (folder / "neutral.svg").unlink()
    real = tmp_path / "real.svg"
    real.write_bytes(SVG)
    (folder / "neutral.svg").symlink_to(real)
    with pytest.raises(images.ImageSetError, match="symbolic link"):
        images.read_image_dir(folder, "c1")
    assert main(["images", "upload", str(folder), "--character", "c1"]) == 1
    assert "symbolic link" in capsys.readouterr().err


def test_a_linked_manifest_is_refused(tmp_path):
    folder = tmp_path / "faces"
    folder.mkdir()
    (folder / "neutral.svg").write_bytes(SVG)
    (folder / "manifest.json").symlink_to(_secret(tmp_path))
    with pytest.raises(images.ImageSetError, match="manifest.json: a symbolic link"):
        images.read_image_dir(folder, "c1")


def test_an_image_made_a_link_after_the_check_is_not_uploaded(aws_settings, tmp_path):
    """The upload reads each file again without following links: swapping one for a link between the check
    and the upload publishes nothing of the link's target."""
    s3 = aws.client("s3", aws_settings)
    folder = tmp_path / "faces"
    folder.mkdir()
    (folder / "neutral.svg").write_bytes(SVG)
    image_set = images.read_image_dir(folder, "c2")
    (folder / "neutral.svg").unlink()
    (folder / "neutral.svg").symlink_to(_secret(tmp_path))
    with pytest.raises(images.ImageSetError, match="symbolic link"):
        images.upload_image_set(s3, aws_settings.bucket, image_set)
    listed = s3.list_objects_v2(Bucket=aws_settings.bucket, Prefix="characters/c2/")
    assert listed.get("KeyCount", 0) == 0
