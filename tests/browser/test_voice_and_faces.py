"""The stage reads the line, in real headless Chromium against the local runtime.

- An agent that sends only text: three lines of different feeling show three
  different faces, each judged among the character's own expressions.
- A line with audio (uploaded to the stage's own origin) plays only after a
  gesture: turning the 読み上げ toggle on. The toggle is off by default and
  remembered per device.
- With the toggle on, a line without audio is read by speech synthesis in
  Japanese with the character's pitch and rate.

The page's calls are observed by wrapping HTMLMediaElement.play and
speechSynthesis.speak in an init script (the page itself runs under its CSP).
"""
import io
import json
import time
import wave

import pytest

from chalicelib import aws, context
from chalicelib.config import Settings
from chalicelib.stage import audio
from tests.browser.test_stage_page import POLL_WAIT_MS, open_page, wait_js
from tests.conftest import ROOT, call

pytestmark = pytest.mark.browser

OBSERVE = """
window.__voice = [];
window.__lines = [];
document.addEventListener("butai:line", function (ev) { window.__lines.push(ev.detail); });
(function () {
  var play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    window.__voice.push({kind: "play", src: this.src});
    return play.apply(this, arguments);
  };
  if (window.speechSynthesis) {
    var synth = window.speechSynthesis;
    var speak = synth.speak.bind(synth);
    synth.speak = function (u) {
      window.__voice.push({kind: "speak", text: u.text, lang: u.lang, pitch: u.pitch, rate: u.rate});
      try { speak(u); } catch (e) {}
    };
  }
})();
"""
HIYORI = json.loads((ROOT / "static/characters/hiyori/manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def runtime_services(local_runtime):
    return context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"]))


def speak(api, stage, body):
    status, _, answer = call(api, "POST", f"/stages/{stage.stage_id}/speak", stage.agent_key, body)
    assert status == 200, answer
    return answer


def calls(page):
    return page.evaluate("() => window.__voice.slice()")


def silence_wav(seconds=0.3, rate=8000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\0\0" * int(seconds * rate))
    return buffer.getvalue()


def test_three_feelings_three_judged_faces(browser, local_runtime, runtime_services):
    api = local_runtime.info["api_url"]
    stage = runtime_services.stage.create_stage("faces")
    page = open_page(browser, api, stage)
    shown = []
    for text in ("わあ、来てくれたんですね！ 嬉しいです！", "えっ、まさか本当ですか！？", "ごめんなさい、うまくできなくて……"):
        answer = speak(api, stage, {"text": text})          # text only: no expression at all
        assert answer["expression_source"] == "auto" and answer["asked_expression"] == "auto"
        assert set(answer["expression_scores"]) == set(HIYORI["expressions"])
        page.wait_for_selector(f"#character-image[data-expression={answer['expression']}]", timeout=POLL_WAIT_MS)
        assert page.inner_text("#speech-text") == text.strip()
        assert page.get_attribute("#character-image", "src").endswith(f"/characters/hiyori/{answer['expression']}.svg")
        shown.append(answer["expression"])
    assert shown == ["smile", "surprised", "troubled"]
    assert len(set(shown)) == 3 and set(shown) <= set(HIYORI["expressions"])
    # An explicit expression is still obeyed as sent.
    answer = speak(api, stage, {"text": "ごめんなさい。", "expression": "determined"})
    assert answer["expression"] == "determined" and answer["expression_source"] == "agent"
    assert page.errors == []
    page.close()


def _spoken_with_audio(local_runtime, runtime_services, tmp_path, name: str, text: str):
    """A new stage whose character said `text` with a silent audio file uploaded beside it: (api, stage, path)."""
    api = local_runtime.info["api_url"]
    settings = Settings(aws_endpoint=local_runtime.info["aws_endpoint"])
    wav = tmp_path / f"{name}.wav"
    wav.write_bytes(silence_wav())
    path = "/" + audio.upload_audio(aws.client("s3", settings), settings.bucket, wav)
    stage = runtime_services.stage.create_stage(name)
    answer = speak(api, stage, {"text": text, "expression": "smile", "audio": path})
    assert answer["audio"] == path
    return api, stage, path


def _observed_context(browser):
    """A phone-sized browser context whose pages record what they play and say (OBSERVE)."""
    context_ = browser.new_context(viewport={"width": 360, "height": 800})
    context_.add_init_script(OBSERVE)
    return context_


def test_audio_plays_after_a_gesture_and_the_toggle_reads_lines(browser, local_runtime, runtime_services, tmp_path):
    api, stage, path = _spoken_with_audio(local_runtime, runtime_services, tmp_path, "voice", "こんにちは、聞こえますか？")

    context_ = _observed_context(browser)
    page = context_.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{api}/#stage={stage.stage_id}&key={stage.player_key}")
    page.wait_for_selector("body[data-state=ready]", timeout=POLL_WAIT_MS)
    toggle = "#voice-toggle"
    page.wait_for_selector(f"{toggle}:not([hidden])")
    assert page.get_attribute(toggle, "aria-pressed") == "false"        # off by default
    # (the bubble shows the line, and so hands it to the voice, a moment after the page is ready: on a busy
    # machine later than any fixed wait)
    page.wait_for_selector("#speech-text:text('こんにちは、聞こえますか？')", timeout=POLL_WAIT_MS)
    # (and the voice has been handed the line — the toggle reads the line it holds: clicked before, it reads none)
    wait_js(page, "window.__lines.length > 0")
    time.sleep(0.5)
    assert calls(page) == []                                             # no autoplay

    page.click(toggle)                                                   # the gesture that enables sound
    assert page.get_attribute(toggle, "aria-pressed") == "true"
    wait_js(page, "window.__voice.length > 0")
    first = calls(page)[0]
    assert first["kind"] == "play" and first["src"] == api + path
    assert page.evaluate("() => localStorage.getItem('butai.voice')") == "on"

    # A line without audio is read aloud, in Japanese, with hiyori's voice.
    speak(api, stage, {"text": "今日はいい天気ですね。"})
    wait_js(page, "window.__voice.some(c => c.kind === 'speak')", timeout_ms=POLL_WAIT_MS)
    spoken = [c for c in calls(page) if c["kind"] == "speak"][-1]
    assert spoken["text"] == "今日はいい天気ですね。" and spoken["lang"] == "ja-JP"
    assert spoken["pitch"] == pytest.approx(HIYORI["voice"]["pitch"])
    assert spoken["rate"] == pytest.approx(HIYORI["voice"]["rate"])

    # Remembered on this device; still silent until the player touches the page again.
    page.reload()
    page.wait_for_selector("body[data-state=ready]", timeout=POLL_WAIT_MS)
    assert page.get_attribute(toggle, "aria-pressed") == "true"
    speak(api, stage, {"text": "まだ静かにしています。"})
    page.wait_for_selector("#speech-text:text('まだ静かにしています。')", timeout=POLL_WAIT_MS)
    assert calls(page) == []
    page.click("#reply-text")                                            # a gesture
    speak(api, stage, {"text": "これは読み上げます。", "audio": path})
    wait_js(page, "window.__voice.some(c => c.kind === 'play')", timeout_ms=POLL_WAIT_MS)
    assert [c["src"] for c in calls(page) if c["kind"] == "play"] == [api + path]

    # Off again: nothing more is played.
    page.click(toggle)
    assert page.evaluate("() => localStorage.getItem('butai.voice')") == "off"
    before = len(calls(page))
    speak(api, stage, {"text": "聞こえないはずです。"})
    page.wait_for_selector("#speech-text:text('聞こえないはずです。')", timeout=POLL_WAIT_MS)
    time.sleep(0.3)
    assert len(calls(page)) == before
    assert errors == []
    context_.close()


def test_the_toggle_reads_the_line_shown_before_the_voice_script_started(browser, local_runtime, runtime_services,
                                                                          tmp_path):
    # voice.js is held back until the page has shown its line: the two scripts load apart, and on a slow network
    # (or a busy machine) the stage's first answer comes first — the toggle still reads the line shown
    api, stage, path = _spoken_with_audio(local_runtime, runtime_services, tmp_path, "voice-late", "遅れて読みます。")
    context_ = _observed_context(browser)
    page = context_.new_page()
    held = []
    page.route("**/voice.js", lambda route: held.append(route))
    # (the page's load waits for the held script: only its start is awaited)
    page.goto(f"{api}/#stage={stage.stage_id}&key={stage.player_key}", wait_until="commit")
    page.wait_for_selector("#speech-text:text('遅れて読みます。')", timeout=POLL_WAIT_MS)
    wait_js(page, "window.__lines.length > 0")
    deadline = time.monotonic() + POLL_WAIT_MS / 1000
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "voice.js was never asked for"
    held[0].continue_()
    page.wait_for_selector("#voice-toggle:not([hidden])", timeout=POLL_WAIT_MS)
    page.click("#voice-toggle")
    wait_js(page, "window.__voice.length > 0")
    assert calls(page)[0] == {"kind": "play", "src": api + path}
    context_.close()
