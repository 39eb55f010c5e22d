"""The page's debug view shows the place and the turn of a played turn, as the stage recorded them.

Played for real: the reference scenario on the local run, replies sent from the page in Chromium; the
values the page shows are compared with the turn record the debug route publishes (`TurnRecord`).
"""
import pytest

from tests.browser.test_stage_page import wait_js
from tests.conftest import call
from tests.scenario_stages import new_scenario_stage

pytestmark = pytest.mark.browser
TURN_MS = 15000

# The value shown beside a label of the debug view's first section (入力).
SHOWN = """(label) => {
  const dt = [...document.querySelectorAll('#debug-body .debug-section:first-child dt')]
    .find(d => d.textContent === label);
  return dt ? dt.nextElementSibling.textContent : null;
}"""


def shown(page, label):
    return page.evaluate(SHOWN, label)


def send(page, text):
    page.fill("#reply-text", text)
    page.click("#reply-submit")
    wait_js(page, "!document.getElementById('reply-submit').disabled", TURN_MS)


def last_turn(api, stage):
    status, _, body = call(api, "GET", f"/stages/{stage['stage_id']}/debug?limit=1", stage["agent_key"])
    assert status == 200, body
    return body["turns"][-1]


def wait_for_turn_of(page, text):
    wait_js(page, "[...document.querySelectorAll('#debug-body dd')].some(d => d.textContent === "
                  f"{text!r})", TURN_MS)


def test_the_debug_view_shows_the_place_and_the_turn_of_a_played_turn(browser, local_runtime):
    api = local_runtime.info["api_url"]
    stage = new_scenario_stage(local_runtime, "browser-debug-view")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{api}/#stage={stage['stage_id']}&key={stage['player_key']}&debug=1")
    page.wait_for_selector("body[data-state=ready]")
    page.wait_for_selector("#cast .cast-member")

    send(page, "こんばんは")
    wait_for_turn_of(page, "こんばんは")
    turn = last_turn(api, stage)
    assert (turn["text"], turn["place_before"], turn["place_after"], turn["turn"]) == ("こんばんは", "店内", "店内", 1)
    page.click("#debug summary")
    assert shown(page, "場所") == "店内"
    assert shown(page, "ターン") == "1"

    send(page, "控え室に行こう")                 # a turn that moves the player
    wait_for_turn_of(page, "控え室に行こう")
    turn = last_turn(api, stage)
    assert (turn["place_before"], turn["place_after"], turn["turn"]) == ("店内", "控え室", 2)
    assert shown(page, "場所") == "店内 → 控え室"
    assert shown(page, "ターン") == "2"
    assert errors == []
    page.close()
