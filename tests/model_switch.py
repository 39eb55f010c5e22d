"""`make run MODEL_URL=… MODEL=…` as a test: the local runtime started the way `make run` starts it (the
switch in BUTAI_MODEL_URL / BUTAI_MODEL, read once by Settings.from_env()), one free-Japanese turn played on
a fresh scenario stage over HTTP, and what that turn's record says about the model.

Used with a stand-in OpenAI-standard server in `make test` (tests/e2e/test_model_switch.py) and with the
real llama.cpp server on a real model in `make test-models` (tests/llm/test_real_model.py)."""
from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import LocalProcess, call
from tests.scenario_stages import new_scenario_stage

# A turn waits for the model twice (classification, then free conversation): minutes for a tiny model on a
# busy 2-core machine.
TURN_WAIT_S = 900

# Said to nobody in particular about nothing the scenario lists: the classifier's answer is up to the model,
# and a なし in the shop asks for free conversation.
TEXT = "宇宙人っていると思う？"


@dataclass
class PlayedTurn:
    banner: str                  # what `butai run` printed
    turn: dict                   # the turn's debug record
    reply_status: int


def play_a_turn(state_dir: Path, model_url: str, model: str, env: dict | None = None,
                text: str = TEXT) -> PlayedTurn:
    runtime = LocalProcess(state_dir, {"BUTAI_MODEL_URL": model_url, "BUTAI_MODEL": model,
                                       # only what `make run MODEL_URL=… MODEL=…` sets: no per-use variable
                                       "BUTAI_CLASSIFIER": "", "BUTAI_GENERATOR": "", **(env or {})})
    runtime.start(timeout=120)
    try:
        api = runtime.info["api_url"]
        stage = new_scenario_stage(runtime, "model-switch")
        request = urllib.request.Request(
            f"{api}/stages/{stage['stage_id']}/reply", method="POST",
            data=json.dumps({"text": text}, ensure_ascii=False).encode(),
            headers={"Authorization": f"Bearer {stage['player_key']}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=TURN_WAIT_S) as response:
            status = response.status
        _, _, debug = call(api, "GET", f"/stages/{stage['stage_id']}/debug?limit=1", stage["agent_key"])
    finally:
        assert runtime.stop() == 0
    banner = (state_dir.parent / f"{state_dir.name}.log").read_text(encoding="utf-8", errors="replace")
    return PlayedTurn(banner, debug["turns"][-1], status)
