"""A fresh scenario stage of the reference scenario on a running local runtime,
so a test that plays a whole game does not share its game with other tests."""
import json
import os
import subprocess
import sys

from tests.conftest import ROOT


def new_scenario_stage(runtime, name: str) -> dict:
    env = {**os.environ, "BUTAI_LOCAL_JSON": str(runtime.state_dir / "local.json")}
    made = subprocess.run([sys.executable, "-m", "butai_tools.cli", "stage", "create", name, "--scenario",
                           str(ROOT / "scenarios" / "chinoike.json"), "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    return json.loads(made.stdout)
