"""The stage's own voice end to end, with the real speech model: `butai run` with BUTAI_VOICE=1 (its voice
worker in process), `butai voice render` over a scenario, the scenario's lines played on a stage in headless
Chromium (rendered ahead: played with no work at turn time; a template's filled line rendered at turn time
from its fixed part), an agent's line shown at once and its audio arriving by push, and lines that cannot be
rendered still shown with the failure kept.  One runtime for the module; each line is rendered once."""
import json
import os
import subprocess
import sys
import urllib.request

import pytest

from tests.browser.conftest import CHROMIUM
from tests.conftest import ROOT, LocalProcess, call

pytestmark = pytest.mark.voice
SCENARIO = ROOT / "tests/voice/voice_scenario.json"
WAIT_MS = 120_000                       # one line's synthesis on two busy cores stays well inside this


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    process = LocalProcess(tmp_path_factory.mktemp("voice") / "state", env={"BUTAI_VOICE": "1"})
    process.start(timeout=120)
    yield process
    assert process.stop() == 0


def butai(runtime, *args) -> dict:
    env = {**os.environ, "BUTAI_LOCAL_JSON": str(runtime.state_dir / "local.json")}
    done = subprocess.run([sys.executable, "-m", "butai_tools.cli", *args, "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--autoplay-policy=user-gesture-required"])
        yield chromium
        chromium.close()


def open_page(browser, runtime, stage):
    page = browser.new_page(viewport={"width": 390, "height": 844})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("body[data-state=ready]")
    page.click("#voice-toggle")                      # the player's gesture that turns the voice on
    return page, errors


def played(page, entry_id: str, how: str = "audio") -> None:
    page.wait_for_function("([id, how]) => (document.body.dataset.voicePlayed || '') === id + ':' + how",
                           arg=[entry_id, how], timeout=WAIT_MS)


def view(runtime, stage) -> dict:
    status, _, body = call(runtime.info["api_url"], "GET", f"/stages/{stage['stage_id']}", stage["player_key"])
    assert status == 200
    return body


def reply(runtime, stage, text) -> dict:
    status, _, body = call(runtime.info["api_url"], "POST", f"/stages/{stage['stage_id']}/reply",
                           stage["player_key"], {"text": text})
    assert status == 202, body
    return body


def sentences_kept(runtime) -> set[str]:
    """The keys of the sentences rendered so far.  The local run's other stages (the reference scenarios,
    voiced) have their opening lines rendered in the background meanwhile, so a test names the keys it
    expects rather than counting files."""
    return {path.stem for path in (runtime.state_dir / "voice" / "sentences").rglob("*.flac")}


def fetch_audio(runtime, url: str) -> bytes:
    with urllib.request.urlopen(runtime.info["api_url"] + url, timeout=30) as response:
        assert response.headers["Content-Type"] == "audio/mpeg"
        return response.read()


def test_a_scenario_s_lines_render_ahead_and_play_on_a_stage(runtime, browser):
    from butai_tools.voice.engine import SAMPLE_RATE
    from butai_tools.voice.render import from_audio
    from chalicelib.voices import VoiceSpec
    report = butai(runtime, "voice", "render", str(SCENARIO))
    # いらっしゃい / こんばんは / はい、お茶です rendered; the bill's template: its fixed part ありがとう;
    # 「……！」 has nothing to say in it and is reported.
    assert (report["lines"], report["templates"], report["uploaded"]) == (5, 1, 3)
    assert len(report["failed"]) == 1 and "……！" in report["failed"][0]
    assert report["synthesized"] == 4 and report["audio_s"] > 1.0
    again = butai(runtime, "voice", "render", str(SCENARIO))      # cached: nothing is said twice
    assert (again["uploaded"], again["kept"], again["synthesized"]) == (0, 3, 0)

    stage = butai(runtime, "stage", "create", "voiced-scenario", "--scenario", str(SCENARIO))
    start = view(runtime, stage)
    [opening] = [e for e in start["log"] if e["role"] == "character"]
    assert opening["text"] == "いらっしゃい。" and opening["audio"].startswith("/audio/")
    assert "audio_status" not in opening or opening["audio_status"] is None
    pcm = from_audio(fetch_audio(runtime, opening["audio"]))
    assert 0.3 < len(pcm) / SAMPLE_RATE < 3.0

    page, errors = open_page(browser, runtime, stage)
    played(page, opening["id"])                                  # the toggle plays the line shown
    # A turn answered by a line rendered ahead: its audio is in the turn's own answer, nothing rendered.
    answered = reply(runtime, stage, "こんばんは")
    [greeting] = [e for e in answered["view"]["log"] if e["text"] == "こんばんは。"]
    assert greeting["audio"].startswith("/audio/") and greeting.get("audio_status") is None
    played(page, greeting["id"])
    [turn] = butai_debug(runtime, stage)
    assert [v["source"] for v in turn["voices"]] == ["ahead"]

    # A template filled at turn time: shown at once, rendered after the write from its fixed part (kept
    # from the render command) and its slot's sentence (the only one said now), its audio pushed.
    reply(runtime, stage, "お茶ください")
    kept = sentences_kept(runtime)
    answered = reply(runtime, stage, "お会計")
    [bill] = [e for e in answered["view"]["log"] if e["role"] == "character"][-1:]
    assert bill["text"] == "300円です。ありがとう。" and bill["audio_status"] == "pending" and not bill.get("audio")
    page.wait_for_selector("#speech-text:text('300円です。ありがとう。')")
    played(page, bill["id"])
    spec = VoiceSpec("jf_alpha", 1.1)                            # the scenario's voice for ひより
    fixed, slot = spec.key("ありがとう。"), spec.key("300円です。")
    assert fixed in kept and slot not in kept                     # the fixed part was rendered ahead
    assert slot in sentences_kept(runtime)                        # the slot's sentence, said now
    [turn] = butai_debug(runtime, stage)
    [voice] = turn["voices"]
    assert voice["source"] == "rendered" and voice["audio"].startswith("/audio/") and voice["ms"] > 0
    assert not voice.get("pending")

    # A line the model cannot say shows all the same; the failure is in the turn's debug record and the
    # page reads it with its own voice.
    answered = reply(runtime, stage, "ありがとう")
    [thanks] = [e for e in answered["view"]["log"] if e["role"] == "character"][-1:]
    assert thanks["text"] == "……！"
    page.wait_for_selector("#speech-text:text('……！')")
    played(page, thanks["id"], "speech")
    [turn] = butai_debug(runtime, stage)
    assert turn["voices"][0]["source"] == "failed" and "Unrenderable" in turn["voices"][0]["error"]
    assert view(runtime, stage)["log"][-1]["audio_status"] == "failed"
    assert errors == []
    page.close()


def butai_debug(runtime, stage) -> list[dict]:
    status, _, body = call(runtime.info["api_url"], "GET", f"/stages/{stage['stage_id']}/debug",
                           stage["agent_key"])
    assert status == 200, body
    return body["turns"]


def test_an_agent_line_shows_at_once_and_its_audio_arrives_by_push(runtime, browser):
    stage = butai(runtime, "stage", "create", "voiced-agent")
    page, errors = open_page(browser, runtime, stage)
    page.wait_for_function("document.body.dataset.push === 'live'")
    status, _, line = call(runtime.info["api_url"], "POST", f"/stages/{stage['stage_id']}/speak",
                           stage["agent_key"], {"text": "お待たせしました。", "expression": "smile"})
    assert status == 200 and line["audio_status"] == "pending" and line["audio"] is None
    # The line is on the page while its voice is rendered; the page waits for the audio, then plays it.
    page.wait_for_selector("#speech-text:text('お待たせしました。')")
    page.wait_for_function("([id]) => document.body.dataset.voiceWaiting === id || "
                           "document.body.dataset.voicePlayed === id + ':audio'", arg=[line["id"]])
    played(page, line["id"])
    [entry] = [e for e in view(runtime, stage)["log"] if e["id"] == line["id"]]
    assert entry["audio"].startswith("/audio/") and entry.get("audio_status") is None
    assert view(runtime, stage)["current"]["audio"] == entry["audio"]

    # An agent's own audio wins: nothing is rendered for it.
    status, _, own = call(runtime.info["api_url"], "POST", f"/stages/{stage['stage_id']}/speak",
                          stage["agent_key"], {"text": "録音の声です。", "audio": entry["audio"]})
    assert status == 200 and own["audio"] == entry["audio"] and own["audio_status"] is None
    played(page, own["id"])
    # A voice that does not exist: 400 naming it, nothing said.
    status, _, refused = call(runtime.info["api_url"], "POST", f"/stages/{stage['stage_id']}/speak",
                              stage["agent_key"], {"text": "はい", "voice": "jf_nope"})
    assert status == 400 and refused["error"]["field"] == "voice"
    assert [e["text"] for e in view(runtime, stage)["log"]][-1] == "録音の声です。"
    assert errors == []
    page.close()
