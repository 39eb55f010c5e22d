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


def open_on_a_phone(browser, runtime, name: str):
    """A fresh scenario stage's page on a 390×844 touch screen, ready and showing its cast; (page, errors):
    the page's uncaught errors are collected in `errors`."""
    stage = new_scenario_stage(runtime, name)
    page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("body[data-state=ready]")
    page.wait_for_selector("#cast .cast-member")
    return page, errors
