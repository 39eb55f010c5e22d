"""Fixtures for the interpretation tests: the reference scenario, states of
the spec, and a small scenario where addressee narrowing removes options."""
from __future__ import annotations

import copy
import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from chalicelib.scenario import GameRules, load_scenario, load_scenario_data  # noqa: E402
from tests.spec_states import SETUPS, play  # noqa: E402

# BUTAI_TEST_SCENARIO points the tests at another copy of the reference scenario.
REFERENCE = Path(os.environ.get("BUTAI_TEST_SCENARIO") or REPO_ROOT / "scenarios" / "chinoike.json")
EVAL_SET = REPO_ROOT / "scenarios" / "eval" / "interpret.json"

@pytest.fixture(scope="session")
def reference_path() -> Path:
    return REFERENCE


@pytest.fixture(scope="session")
def rules() -> GameRules:
    return GameRules(load_scenario(REFERENCE))


@pytest.fixture(scope="session")
def states(rules) -> dict[str, Any]:
    return {name: play(rules, setup) for name, setup in SETUPS.items()}


@pytest.fixture(scope="session")
def interpreter(rules):
    from chalicelib.interpret import Interpreter
    return Interpreter(rules)


SMALL: dict[str, Any] = {
    "title": "小さな台本",
    "start": {"place": "部屋"},
    "characters": [
        {"id": "甲", "name": "甲", "aliases": ["甲さん"], "expressions": ["neutral"],
         "knowledge": [{"info": "天気の考え", "condition": "意図:天気"}]},
        {"id": "乙", "name": "乙", "aliases": ["乙ちゃん"], "expressions": ["neutral"],
         "knowledge": [{"info": "花の考え", "condition": "意図:花"}]},
        {"id": "丙", "name": "丙", "aliases": [], "expressions": ["neutral"], "knowledge": []},
    ],
    "places": [
        {"id": "部屋", "aliases": ["へや"], "people": ["甲", "乙"], "responder": "甲", "exits": ["庭"]},
        {"id": "庭", "aliases": ["お庭"], "people": ["乙", "丙"], "responder": "乙", "exits": ["部屋"]},
    ],
    "intents": [
        {"id": "天気", "description": "天気の話をする", "examples": ["今日はいい天気だね"], "words": ["天気", "晴れ", "雨"]},
        {"id": "花", "description": "花の話をする", "examples": ["きれいな花だね"], "words": ["花"]},
        {"id": "夕食", "description": "夕食の話をする", "examples": ["晩ごはんは何？"], "words": []},
    ],
    "scenes": [
        {"place": "部屋", "lines": [
            {"id": "R1", "speaker": "甲", "condition": "意図:天気", "text": "晴れるといいね。"},
            {"id": "R2", "speaker": "甲", "condition": "意図:夕食", "text": "カレーだよ。"},
            {"id": "R3", "speaker": "乙", "condition": "意図:花", "text": "花が好きなの。"},
        ]},
        {"place": "庭", "lines": []},
    ],
}


@pytest.fixture
def small_rules() -> GameRules:
    return GameRules(load_scenario_data(copy.deepcopy(SMALL), source="small.json"))
