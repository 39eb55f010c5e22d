"""The voice through a turn of several lines, in real headless Chromium against a local runtime in this
process (so a test can hold the page's pushes back, and play the stage's voice worker itself).

- A turn of three characters' lines, each with its own audio, is voiced in order, each line to its end
  before the next starts, and the bubble stays on the line being voiced after its reading time.
- Lines the player stepped ahead to by hand, and lines pushed one at a time while an earlier one is being
  said, wait in the voice for the line being said. (That the bubble, too, stays on the line being said when
  the turn grows meanwhile is an expected failure: app.js steps it on at once.)
- A new turn drops what the last one had not said yet: those lines are never played.
- A line whose audio the stage is still rendering (`audio_status: pending`) waits about 12 s for it and
  is then read by speech synthesis (its audio coming later is not played over it); one whose audio comes
  by push in time is played from the audio.

The page's sound is observed and driven from an init script: HTMLMediaElement.play and pause and
speechSynthesis.speak and cancel only record their calls (nothing sounds), and the test ends a line itself
(an `ended` event, an utterance's `onend`). Time is a fake clock for the timers voice.js sets (its wait for
pending audio, its guard on a line that never ends) and for the bubble's reading time (app.js's
scheduleStep): they fire only when the test advances the clock, so nothing here races the machine's load.
Every other timer of the page (polls, the push socket's) runs on real time.
"""
import io
import json
import re
import tempfile
import time
import wave
from pathlib import Path

import pytest

from butai_tools.local.runtime import LocalRuntime
from chalicelib import aws
from chalicelib.stage import audio
from tests.conftest import call

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
WAIT_MS = 20000                # generous: two busy cores
READ_MAX_MS = 7000             # app.js: the longest a line is shown before the bubble steps on by itself

SOUND = """
(function () {
  // ---- a fake clock for voice.js's timers and the bubble's reading time (app.js's scheduleStep)
  var realSet = window.setTimeout, realClear = window.clearTimeout;
  var clock = window.__clock = {now: 0, timers: [], nextId: 1000000000};
  function faked(stack) {
    var caller = String(stack || "").split("\\n")[2] || "";    // [0] "Error", [1] this wrapper, [2] its caller
    return /\\/voice\\.js/.test(caller) || /\\bat scheduleStep\\b/.test(caller);
  }
  window.setTimeout = function (fn, ms) {
    if (typeof fn === "function" && faked(new Error().stack)) {
      var delay = Math.max(0, Number(ms) || 0);
      var timer = {id: clock.nextId++, due: clock.now + delay, delay: delay, fn: fn,
                   args: Array.prototype.slice.call(arguments, 2)};
      clock.timers.push(timer);
      return timer.id;
    }
    return realSet.apply(window, arguments);
  };
  window.clearTimeout = function (id) {
    if (typeof id === "number" && id >= 1000000000) {
      clock.timers = clock.timers.filter(function (t) { return t.id !== id; });
      return;
    }
    return realClear.apply(window, arguments);
  };
  // Moves the fake clock on by `ms`, firing each timer that falls due on the way, in order.
  window.__advance = function (ms) {
    var until = clock.now + ms;
    for (;;) {
      var due = clock.timers.filter(function (t) { return t.due <= until; })
        .sort(function (a, b) { return a.due - b.due || a.id - b.id; })[0];
      if (!due) break;
      clock.timers = clock.timers.filter(function (t) { return t !== due; });
      clock.now = due.due;
      due.fn.apply(window, due.args);
    }
    clock.now = until;
  };

  // ---- sound: recorded, never made
  var sound = window.__sound = [];
  window.__media = null;
  HTMLMediaElement.prototype.play = function () {
    window.__media = this;
    sound.push({kind: "play", src: this.src, at: clock.now});
    return Promise.resolve();
  };
  HTMLMediaElement.prototype.pause = function () {
    sound.push({kind: "pause", src: this.src, at: clock.now});
  };
  // The audio playing now comes to its end.
  window.__endAudio = function () {
    var media = window.__media;
    sound.push({kind: "end", src: media.src, at: clock.now});
    media.dispatchEvent(new Event("ended"));
  };
  window.__utterance = null;
  if (window.speechSynthesis) {
    window.speechSynthesis.speak = function (u) {
      window.__utterance = u;
      sound.push({kind: "speak", text: u.text, at: clock.now});
    };
    window.speechSynthesis.cancel = function () { sound.push({kind: "cancel", at: clock.now}); };
  }
  window.__endSpeech = function () {
    var u = window.__utterance;
    sound.push({kind: "end", text: u.text, at: clock.now});
    if (typeof u.onend === "function") u.onend(new Event("end"));
  };

  // ---- what voice.js tells the page, and the audio that reaches it by push
  var told = window.__told = [];
  document.addEventListener("butai:voice", function (ev) { told.push(ev.detail); });
  document.addEventListener("butai:audio", function (ev) { told.push({arrived: ev.detail.id, audio: ev.detail.audio}); });
})();
"""


@pytest.fixture(scope="module")
def runtime():
    with tempfile.TemporaryDirectory() as tmp:
        local = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, scenario_stages={},
                             saver_interval=3600, rate=0)
        local.start()
        try:
            yield local
        finally:
            local.stop()


def silence_wav(seconds: float, rate: int = 8000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\0\0" * int(seconds * rate))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def clips(runtime, tmp_path_factory):
    """Five distinct clips on the stage's own origin (paths for `speak`), each 9-13 s long: longer than a
    line's reading time, so that only the test's `ended` ends a line while the bubble's time runs out."""
    s3 = aws.client("s3", runtime.settings)
    folder = tmp_path_factory.mktemp("clips")
    paths = []
    for i, seconds in enumerate((9, 10, 11, 12, 13)):
        wav = folder / f"clip{i}.wav"
        wav.write_bytes(silence_wav(seconds))
        paths.append("/" + audio.upload_audio(s3, runtime.settings.bucket, wav))
    assert len(set(paths)) == len(paths)
    return paths


class HeldPush:
    """The page's push socket through a proxy that can hold the server's messages back: released, the page
    gets only the newest view (and any other message), so a turn's lines written meanwhile come at once."""

    def __init__(self):
        self.holding = False
        self.kept: list[str] = []
        self.ws = None

    def route(self, ws):
        server = ws.connect_to_server()
        self.ws = ws

        def from_server(message):
            if self.holding:
                self.kept.append(message)
            else:
                ws.send(message)
        server.on_message(from_server)

    def versions(self) -> list[str]:
        return [json.loads(m).get("view", {}).get("version") for m in self.kept]

    def release(self, page, version: str) -> None:
        wait_until(page, lambda: version in self.versions(), f"the push of {version}")
        views = [m for m in self.kept if json.loads(m).get("type") == "view"]
        for message in self.kept:
            if json.loads(message).get("type") != "view" or message is views[-1]:
                self.ws.send(message)
        self.kept, self.holding = [], False


def wait_until(page, check, what: str, timeout_ms: int = WAIT_MS) -> None:
    """Polls `check()` (Python) while Playwright runs the page and the proxy's handlers."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(50)


def wait_js(page, expression: str, timeout_ms: int = WAIT_MS) -> None:
    """Polls a JS expression (the page's CSP forbids the eval that wait_for_function relies on)."""
    wait_until(page, lambda: page.evaluate(f"() => Boolean({expression})"), expression, timeout_ms)


def open_page(browser, runtime, created):
    context_ = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context_.add_init_script(SOUND)
    page = context_.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.push = HeldPush()
    page.route_web_socket(re.compile(r".*/push$"), page.push.route)
    page.goto(f"{runtime.api_url}/#stage={created.stage_id}&key={created.player_key}")
    page.wait_for_selector("body[data-state=ready]", timeout=WAIT_MS)
    wait_js(page, "document.body.dataset.push === 'live'")
    page.click("#voice-toggle")                     # the player's gesture: the voice is on
    assert page.get_attribute("#voice-toggle", "aria-pressed") == "true"
    # A new stage: nothing to say yet (turning the voice on only stopped whatever was being said).
    assert [c["kind"] for c in sound(page)] in ([], ["cancel"])
    page.evaluate("() => { window.__sound.length = 0; }")
    return page


def speak(runtime, created, text, **fields):
    status, _, body = call(runtime.api_url, "POST", f"/stages/{created.stage_id}/speak", created.agent_key,
                           {"text": text, **fields})
    assert status == 200, body
    return body


def speak_turn(page, runtime, created, lines) -> list[dict]:
    """The agent's lines, written while the page's pushes are held: the page gets the turn in one view."""
    page.push.holding = True
    said = [speak(runtime, created, text, **fields) for text, fields in lines]
    page.push.release(page, said[-1]["id"])
    return said


def sound(page) -> list[dict]:
    return page.evaluate("() => window.__sound.slice()")


def plays(page) -> list[str]:
    return [c["src"] for c in sound(page) if c["kind"] == "play"]


def bubble(page) -> dict:
    return page.evaluate("""() => { const s = document.getElementById('speech');
        return {step: Number(s.dataset.step || 0), steps: Number(s.dataset.steps || 0),
                speaker: document.getElementById('speaker-name').textContent,
                text: document.getElementById('speech-text').textContent}; }""")


def advance(page, ms: int) -> None:
    page.evaluate("(ms) => window.__advance(ms)", ms)


def saying(page) -> str:
    return page.evaluate("() => document.body.dataset.voiceSaying || ''")


THREE = [("いらっしゃい、待っていたよ。", {"speaker": "ひより"}),
         ("こんばんは！ 今日は何にする？", {"speaker": "葵"}),
         ("まずはお茶をどうぞ。", {"speaker": "ママ"})]


def test_a_turn_of_three_voices_is_said_in_order_and_the_bubble_waits(browser, runtime, clips):
    created = runtime.stage_service.create_stage("three-voices")
    page = open_page(browser, runtime, created)
    lines = [(text, {**fields, "audio": clips[i]}) for i, (text, fields) in enumerate(THREE)]
    said = speak_turn(page, runtime, created, lines)
    urls = [runtime.api_url + clip for clip in clips[:3]]

    for i, (text, fields) in enumerate(THREE):
        # The line is shown and is being said from its own audio.
        wait_js(page, f"document.body.dataset.voiceSaying === {said[i]['id']!r}")
        assert bubble(page) == {"step": i + 1, "steps": 3, "speaker": fields["speaker"], "text": text}
        assert plays(page) == urls[:i + 1]
        if i < 2:
            assert page.evaluate("() => window.__clock.timers.length") >= 2   # its reading time, the voice's guard
            # Its reading time runs out while it is still being said: the bubble stays on it, and the next
            # line is not said yet.
            advance(page, READ_MAX_MS)
            assert bubble(page)["step"] == i + 1 and saying(page) == said[i]["id"]
            assert plays(page) == urls[:i + 1]
        page.evaluate("() => window.__endAudio()")      # said to its end
    # Each line to its end before the next started; nothing more after the last.
    advance(page, 60000)
    events = [(c["kind"], c.get("src")) for c in sound(page) if c["kind"] in ("play", "end", "speak")]
    assert events == [(kind, url) for url in urls for kind in ("play", "end")]
    assert bubble(page)["step"] == 3 and saying(page) == ""
    done = [t for t in page.evaluate("() => window.__told") if t.get("state") == "done"]
    assert [(t["id"], t["how"]) for t in done] == [(s["id"], "audio") for s in said]
    assert page.errors == []
    page.context.close()


def test_lines_stepped_to_by_hand_wait_for_the_line_being_said(browser, runtime, clips):
    created = runtime.stage_service.create_stage("stepped-ahead")
    page = open_page(browser, runtime, created)
    lines = [(text, {**fields, "audio": clips[i]}) for i, (text, fields) in enumerate(THREE)]
    said = speak_turn(page, runtime, created, lines)
    urls = [runtime.api_url + clip for clip in clips[:3]]
    wait_js(page, f"document.body.dataset.voiceSaying === {said[0]['id']!r}")
    # The player reads on faster than the voice: the next lines are shown, and wait to be said.
    page.click("#speech-next")
    page.click("#speech-next")
    assert bubble(page)["step"] == 3
    queued = [t["id"] for t in page.evaluate("() => window.__told") if t.get("state") == "queued"]
    assert queued == [s["id"] for s in said]
    advance(page, 5000)                                 # (well inside the first clip's 9 s)
    assert plays(page) == urls[:1] and saying(page) == said[0]["id"]
    for i in range(3):
        wait_js(page, f"document.body.dataset.voiceSaying === {said[i]['id']!r}")
        assert plays(page) == urls[:i + 1]
        page.evaluate("() => window.__endAudio()")
    advance(page, 60000)
    events = [(c["kind"], c.get("src")) for c in sound(page) if c["kind"] in ("play", "end", "speak")]
    assert events == [(kind, url) for url in urls for kind in ("play", "end")]
    assert page.errors == []
    page.context.close()


def speak_one_by_one(page, runtime, created, lines) -> list[dict]:
    """The agent's lines, each pushed to the page on its own (as an agent writes them, one `speak` at a time)."""
    said = []
    for text, fields in lines:
        said.append(speak(runtime, created, text, **fields))
        wait_js(page, f"document.body.dataset.version === {said[-1]['id']!r}")
    return said


def test_lines_pushed_one_at_a_time_are_said_in_order_each_to_its_end(browser, runtime, clips):
    created = runtime.stage_service.create_stage("one-by-one")
    page = open_page(browser, runtime, created)
    said = speak_one_by_one(page, runtime, created,
                            [(text, {**fields, "audio": clips[i]}) for i, (text, fields) in enumerate(THREE)])
    urls = [runtime.api_url + clip for clip in clips[:3]]
    for i in range(3):
        wait_js(page, f"document.body.dataset.voiceSaying === {said[i]['id']!r}")
        advance(page, 5000)                             # (inside the clip: it is still being said)
        assert plays(page) == urls[:i + 1] and saying(page) == said[i]["id"]
        page.evaluate("() => window.__endAudio()")
    advance(page, 60000)
    events = [(c["kind"], c.get("src")) for c in sound(page) if c["kind"] in ("play", "end", "speak")]
    assert events == [(kind, url) for url in urls for kind in ("play", "end")]
    assert page.errors == []
    page.context.close()


def test_a_line_pushed_while_the_last_is_said_waits_in_the_bubble_too(browser, runtime, clips):
    created = runtime.stage_service.create_stage("grown-turn")
    page = open_page(browser, runtime, created)
    [first] = speak_one_by_one(page, runtime, created, [(THREE[0][0], {**THREE[0][1], "audio": clips[0]})])
    wait_js(page, f"document.body.dataset.voiceSaying === {first['id']!r}")
    [second] = speak_one_by_one(page, runtime, created, [(THREE[1][0], {**THREE[1][1], "audio": clips[1]})])
    # The first line is still being said: the bubble shows it, not the line the voice has not come to yet.
    assert saying(page) == first["id"]
    assert bubble(page)["text"] == THREE[0][0]
    page.evaluate("() => window.__endAudio()")          # said: the bubble and the voice come to the next line
    wait_js(page, f"document.body.dataset.voiceSaying === {second['id']!r}")
    assert bubble(page)["text"] == THREE[1][0]
    assert page.errors == []
    page.context.close()


def test_a_new_turn_drops_the_lines_the_last_one_had_not_said(browser, runtime, clips):
    created = runtime.stage_service.create_stage("new-turn")
    page = open_page(browser, runtime, created)
    first = speak_turn(page, runtime, created,
                       [(text, {**fields, "audio": clips[i]}) for i, (text, fields) in enumerate(THREE)])
    urls = [runtime.api_url + clip for clip in clips]
    wait_js(page, f"document.body.dataset.voiceSaying === {first[0]['id']!r}")
    page.click("#speech-next")                          # the turn's other two lines wait to be said
    page.click("#speech-next")
    assert plays(page) == urls[:1]

    # The player answers; the characters answer with a new turn while the first line is still being said.
    status, _, _ = call(runtime.api_url, "POST", f"/stages/{created.stage_id}/reply", created.player_key,
                        {"text": "じゃあ、お茶をください。"})
    assert status == 202
    second = speak_turn(page, runtime, created, [("はい、お茶です。", {"speaker": "ママ", "audio": clips[3]}),
                                                 ("熱いから気をつけてね。", {"speaker": "葵", "audio": clips[4]})])
    wait_js(page, f"document.body.dataset.voiceSaying === {second[0]['id']!r}")
    assert bubble(page)["text"] == "はい、お茶です。"
    page.evaluate("() => window.__endAudio()")
    advance(page, READ_MAX_MS)                          # the bubble steps on to the turn's second line
    wait_js(page, f"document.body.dataset.voiceSaying === {second[1]['id']!r}")
    page.evaluate("() => window.__endAudio()")
    advance(page, 60000)                                # and then nothing more is said
    assert saying(page) == ""
    assert plays(page) == [urls[0], urls[3], urls[4]]
    assert not any(c["kind"] == "speak" for c in sound(page))
    # The first line was cut short by the new turn; the two unsaid ones were dropped, never said.
    kinds = [(c["kind"], c["src"]) for c in sound(page) if c["kind"] in ("play", "pause")]
    assert kinds.index(("pause", urls[0])) < kinds.index(("play", urls[3]))
    told = page.evaluate("() => window.__told")
    dropped = [t["id"] for t in told if t.get("how") == "dropped"]
    assert dropped == [s["id"] for s in first]
    assert not any(t.get("state") == "playing" and t["id"] in (first[1]["id"], first[2]["id"]) for t in told)
    assert page.errors == []
    page.context.close()


@pytest.fixture
def voice_worker(runtime):
    """The stage renders the voice of lines sent without audio: their jobs land here, and the test plays the
    worker (stage.voiced), whose outcome the push carries to the page."""
    service = runtime.stage_service
    jobs = []
    service.voice_on, service.voice_jobs = True, jobs.extend
    try:
        yield jobs
    finally:
        service.voice_on, service.voice_jobs = False, None


def pending_line(page, runtime, created, text, jobs):
    line = speak(runtime, created, text)
    assert line["audio_status"] == "pending" and line["audio"] is None
    [job] = [j for j in jobs if j.entry == line["id"]]
    page.wait_for_selector(f"#speech-text:text-is('{text}')", timeout=WAIT_MS)
    wait_js(page, f"document.body.dataset.voiceWaiting === {line['id']!r} && "
                  f"document.body.dataset.voiceSaying === {line['id']!r}")
    return line, job


def test_a_pending_line_waits_about_twelve_seconds_then_is_read(browser, runtime, clips, voice_worker):
    created = runtime.stage_service.create_stage("pending-late")
    page = open_page(browser, runtime, created)
    text = "少々お待ちください。"
    line, job = pending_line(page, runtime, created, text, voice_worker)
    # The wait runs on the fake clock (not on real time, which a busy machine would stretch).
    assert [d for d in page.evaluate("() => window.__clock.timers.map(t => t.delay)") if 11000 <= d <= 13000]
    advance(page, 11000)                                # still waiting for the stage's voice
    assert sound(page) == [] and saying(page) == line["id"]
    advance(page, 2000)                                 # past the wait (about 12 s): the browser reads it
    spoken = [c for c in sound(page) if c["kind"] == "speak"]
    assert [c["text"] for c in spoken] == [text] and 11000 < spoken[0]["at"] <= 13000
    assert plays(page) == []
    # Its audio comes after all: the line is already being read, and is not said twice.
    assert runtime.stage_service.voiced(job, clips[0].lstrip("/"))
    wait_js(page, f"window.__told.some(t => t.arrived === {line['id']!r} && t.audio)")
    page.evaluate("() => window.__endSpeech()")
    advance(page, 60000)
    assert plays(page) == [] and saying(page) == ""
    assert [c["text"] for c in sound(page) if c["kind"] == "speak"] == [text]
    done = [(t["id"], t["how"]) for t in page.evaluate("() => window.__told") if t.get("state") == "done"]
    assert done == [(line["id"], "speech")]
    assert page.errors == []
    page.context.close()


def test_a_pending_line_whose_audio_comes_in_time_is_played(browser, runtime, clips, voice_worker):
    created = runtime.stage_service.create_stage("pending-in-time")
    page = open_page(browser, runtime, created)
    text = "いま声を用意しています。"
    line, job = pending_line(page, runtime, created, text, voice_worker)
    advance(page, 8000)                                 # well inside the wait
    assert sound(page) == []
    assert runtime.stage_service.voiced(job, clips[1].lstrip("/"))      # the stage's voice is ready: pushed
    wait_js(page, "window.__sound.some(c => c.kind === 'play')")
    assert plays(page) == [runtime.api_url + clips[1]]
    assert page.evaluate("() => document.body.dataset.voicePlayed") == line["id"] + ":audio"
    advance(page, 6000)                                 # past the wait: nothing is read over the audio
    assert not any(c["kind"] == "speak" for c in sound(page)) and saying(page) == line["id"]
    page.evaluate("() => window.__endAudio()")
    advance(page, 60000)
    assert plays(page) == [runtime.api_url + clips[1]] and not any(c["kind"] == "speak" for c in sound(page))
    done = [(t["id"], t["how"]) for t in page.evaluate("() => window.__told") if t.get("state") == "done"]
    assert done == [(line["id"], "audio")]
    assert page.errors == []
    page.context.close()
