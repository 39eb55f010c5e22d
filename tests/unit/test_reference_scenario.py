"""The reference scenario may grow (reactions, knowledge lines, arrivals, endings), but its intents' words and
examples stay exactly as the author wrote them: interpretation is measured on an author's words."""
import json

import pytest

from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "scenarios" / "chinoike.json"


def test_the_intents_words_and_examples_are_the_authors():
    if not SHARED.exists():
        pytest.skip("the author's copy is not beside this checkout")
    shipped = json.loads((ROOT / "scenarios/chinoike.json").read_text(encoding="utf-8"))
    reference = json.loads(SHARED.read_text(encoding="utf-8"))
    ours = {i["id"]: i for i in shipped["intents"]}
    assert set(ours) == {i["id"] for i in reference["intents"]}
    for intent in reference["intents"]:
        assert ours[intent["id"]].get("words") == intent.get("words"), intent["id"]
        assert ours[intent["id"]].get("examples") == intent.get("examples"), intent["id"]
    for key in ("places", "characters"):
        assert {x["id"] for x in reference[key]} <= {x["id"] for x in shipped[key]}


def test_the_reference_scenario_is_the_one_shipped():
    shipped = (ROOT / "scenarios/chinoike.json").read_bytes()
    assert '"title": "血の池の夜'.encode() in shipped
