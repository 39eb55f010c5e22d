"""Fixtures for the scenario engine tests: the reference scenario and a
factory for small scenarios built in the test itself."""
from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:  # plain `pytest` without an editable install
    sys.path.insert(0, str(REPO_ROOT))

from chalicelib.scenario import GameRules, load_scenario, load_scenario_data  # noqa: E402

REFERENCE = REPO_ROOT / "scenarios" / "chinoike.json"


@pytest.fixture(scope="session")
def reference_path() -> Path:
    return REFERENCE


@pytest.fixture(scope="session")
def reference_data() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


@pytest.fixture
def reference_copy(reference_data) -> dict[str, Any]:
    """A deep copy of the reference scenario that a test may break."""
    return copy.deepcopy(reference_data)


@pytest.fixture(scope="session")
def compiled(reference_path):
    return load_scenario(reference_path)


@pytest.fixture(scope="session")
def rules(compiled) -> GameRules:
    return GameRules(compiled)


def spec_form(data: dict[str, Any]) -> dict[str, Any]:
    """The reference scenario as the contract describes it: without the places'
    arrival reactions and endings (where leaving lists the exits and the game
    goes on), which the reference scenario adds on top."""
    data = copy.deepcopy(data)
    for place in data["places"]:
        place.pop("arrival", None)
        place.pop("ending", None)
    return data


@pytest.fixture(scope="session")
def spec_rules(reference_data) -> GameRules:
    return GameRules(load_scenario_data(spec_form(reference_data), source="chinoike.json"))


def _line(spec: tuple | dict) -> dict[str, Any]:
    if isinstance(spec, dict):
        return spec
    line_id, speaker, condition, *rest = spec
    line = {"id": line_id, "speaker": speaker, "condition": condition, "text": f"{line_id}の台詞"}
    if rest:
        line["effects"] = list(rest[0])
    return line


def small_scenario(room: list = (), garden: list = (), **changes: Any) -> dict[str, Any]:
    """Two places (部屋 ⇄ 庭), two characters (甲 answers in 部屋, 乙 is in both),
    two intents (天気, 花).  Lines are (id, speaker, condition[, effects])."""
    data: dict[str, Any] = {
        "title": "小さな台本",
        "start": {"place": "部屋"},
        "characters": [
            {"id": "甲", "name": "甲", "aliases": ["甲さん"], "expressions": ["neutral", "smile", "angry"],
             "knowledge": [{"info": "甲は晴れが好き", "condition": "意図:天気"},
                           {"info": "甲は花が好き", "condition": "意図:花 + 入力"},
                           {"info": "甲はいつも眠い", "condition": ""}],
             "fallbacks": [{"id": "甲-拒1", "text": "さあね。"}]},
            {"id": "乙", "name": "乙", "aliases": ["乙さん"], "expressions": ["neutral", "smile"],
             "knowledge": [{"info": "乙は雨が好き", "condition": "意図:天気"},
                           {"info": "乙は話題がないと黙る", "condition": "なし"}],
             "fallbacks": [{"id": "乙-拒1", "text": "……"}]},
        ],
        "places": [
            {"id": "部屋", "aliases": ["へや"], "people": ["甲", "乙"], "responder": "甲", "exits": ["庭"]},
            {"id": "庭", "aliases": ["にわ"], "people": ["乙"], "responder": "乙", "exits": ["部屋"]},
        ],
        "intents": [
            {"id": "天気", "description": "天気の話", "examples": ["いい天気だね"], "words": ["天気"]},
            {"id": "花", "description": "花の話", "examples": ["花がきれい"], "words": ["花"]},
        ],
        "scenes": [
            {"place": "部屋", "lines": [_line(s) for s in room]},
            {"place": "庭", "lines": [_line(s) for s in garden]},
        ],
    }
    data.update(changes)
    return data


@pytest.fixture
def make_rules() -> Callable[..., GameRules]:
    def build(room: list = (), garden: list = (), **changes: Any) -> GameRules:
        return GameRules(load_scenario_data(small_scenario(room, garden, **changes), source="small.json"))
    return build


@pytest.fixture
def make_data() -> Callable[..., dict[str, Any]]:
    return small_scenario
