"""Golden transcripts: scripted games on the reference scenario, with the full
list of steps checked in under golden/.  After an intended change to the
rules, regenerate with BUTAI_UPDATE_GOLDEN=1 and review the diff."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chalicelib.scenario import PlayerInput

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("BUTAI_UPDATE_GOLDEN") == "1"

SCRIPTS = {
    "acceptance": {
        "description": "The spec's trace: なし 意図:音楽 移動:控え室",
        "inputs": ["なし", "意図:音楽", "移動:控え室"],
    },
    "tour": {
        "description": "Free talk before the topic opens, both topics, the back room and back again",
        "inputs": ["意図:赤いドア", "なし", "意図:メニュー", "意図:メニュー", "意図:二人の先の話", "離脱",
                   "移動:控え室", "意図:二人の先の話", "意図:宣伝の写真", "意図:宣伝の写真", "なし", "移動:店内",
                   "意図:音楽", "意図:いい店とは"],
    },
    "addressee": {
        "description": "Explicit addressees: blocked response, own response, absent addressee ignored",
        "inputs": ["なし", {"input": "意図:音楽", "to": "神楽坂葵"}, {"input": "意図:音楽", "to": "赤尾妙子"},
                   {"input": "意図:二人の先の話", "to": "神楽坂葵"}, {"input": "意図:今のままでいい", "to": "神楽坂葵"},
                   "移動:控え室", {"input": "意図:メニュー", "to": "赤尾妙子"}],
    },
    "refusals": {
        "description": "Moves that are refused or already done, and leaving",
        "inputs": ["移動:店内", "移動:裏口", "離脱", "移動:控え室", "移動:控え室", "離脱", "移動:店内"],
    },
    # The reference scenario with what it adds to the contract's example: arrival reactions and an ending.
    "ending": {
        "full": True,
        "description": "Arrival reactions once the scripted arrival is used, leaving the shop ends the visit",
        "inputs": ["なし", "移動:控え室", "移動:店内", "移動:控え室", "移動:店内", "離脱", "なし", "移動:控え室"],
    },
}


def run_script(rules, inputs):
    step = rules.start()
    steps = [{**step.to_dict(), "candidates": [str(c) for c in rules.candidates(step.state)]}]
    for item in inputs:
        text, to = (item, None) if isinstance(item, str) else (item["input"], item.get("to"))
        step = rules.handle(PlayerInput.parse(text), step.state, to)
        entry = {**step.to_dict(), "candidates": [str(c) for c in rules.candidates(step.state)]}
        if to is not None:
            entry = {"to": to, **entry}
        steps.append(entry)
    return steps


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_golden_transcript(rules, spec_rules, name):
    script = SCRIPTS[name]
    played = rules if script.get("full") else spec_rules
    actual = {"scenario": "scenarios/chinoike.json", "description": script["description"],
              "inputs": script["inputs"], "steps": run_script(played, script["inputs"])}
    path = GOLDEN / f"{name}.json"
    if UPDATE:
        path.write_text(json.dumps(actual, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert expected["inputs"] == script["inputs"], f"{path.name} was recorded for other inputs"
    for number, (want, got) in enumerate(zip(expected["steps"], actual["steps"])):
        assert got == want, f"{path.name}: step {number} ({got['input']}) differs"
    assert len(actual["steps"]) == len(expected["steps"])


def test_golden_files_have_scripts():
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(SCRIPTS)
