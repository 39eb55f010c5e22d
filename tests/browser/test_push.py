"""Push to the page in real Chromium at phone size, against a local runtime in this process (so a test can
drop every socket from the server's side, as API Gateway does at a connection's two-hour end).

- A pushed line reaches the page with no polling at all while the socket is subscribed.
- 20 forced disconnects, a line spoken while each is down and one after: every line shows exactly once,
  in order (the reconnect catches up from the page's last version).
- Without a socket the page polls, and tries the socket again with growing pauses.
- A hidden tab holds no socket; shown again, it reconnects and catches up.
- Long lines come as the log's newest entries after a named one; a page that missed pushes fetches.
"""
import json
import re
import tempfile
import time
from pathlib import Path

import pytest

from butai_tools.local.runtime import LocalRuntime
from tests.browser.accessibility import assert_accessible
from tests.browser.reading import read_turn
from tests.browser.test_stage_page import wait_js
from tests.conftest import call

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
WAIT_MS = 10000

# Counts each log entry the page puts on the screen, by id: shown twice is counted twice.
COUNT_ENTRIES = """
window.__shown = {};
new MutationObserver(function (changes) {
  changes.forEach(function (change) {
    change.addedNodes.forEach(function (node) {
      if (node.nodeType === 1 && node.matches('#log li[data-id]')) {
        window.__shown[node.dataset.id] = (window.__shown[node.dataset.id] || 0) + 1;
      }
    });
  });
}).observe(document, {childList: true, subtree: true});
"""
# document.hidden as the test says (headless Chromium keeps every tab visible).
HIDEABLE = """
window.__hidden = false;
Object.defineProperty(Document.prototype, 'hidden', {get: function () { return window.__hidden; }});
Object.defineProperty(Document.prototype, 'visibilityState', {
  get: function () { return window.__hidden ? 'hidden' : 'visible'; }});
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


def open_page(browser, runtime, created, *scripts, route=None):
    context_ = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    for script in scripts:
        context_.add_init_script(script)
    page = context_.new_page()
    page.errors, page.polls = [], []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("request", lambda req: page.polls.append(req.url) if req.method == "GET" and "/stages/" in req.url
            else None)
    if route is not None:
        page.route_web_socket(re.compile(r".*/push$"), route)
    page.goto(f"{runtime.api_url}/#stage={created.stage_id}&key={created.player_key}")
    page.wait_for_selector("body[data-state=ready]", timeout=WAIT_MS)
    return page


def speak(runtime, created, text):
    status, _, body = call(runtime.api_url, "POST", f"/stages/{created.stage_id}/speak", created.agent_key,
                           {"text": text})
    assert status == 200, body
    return body


def log_texts(page):
    return page.eval_on_selector_all("#log li .entry-text", "els => els.map(e => e.textContent)")


def shown_in_log(page, text):
    wait_js(page, f"Array.from(document.querySelectorAll('#log li .entry-text')).some(e => e.textContent === {text!r})",
            WAIT_MS)


def test_a_pushed_line_needs_no_polling(browser, runtime):
    created = runtime.stage_service.create_stage("pushed")
    page = open_page(browser, runtime, created)
    wait_js(page, "document.body.dataset.push === 'live'", WAIT_MS)
    time.sleep(0.3)                       # the subscription's one catch-up GET has gone out
    polls_before = len(page.polls)
    for text in ("いま届きます", "次の台詞", "三つ目"):
        speak(runtime, created, text)
        page.wait_for_selector(f"#speech-text:text-is('{text}')", timeout=WAIT_MS)
    assert log_texts(page) == ["いま届きます", "次の台詞", "三つ目"]
    assert len(page.polls) == polls_before, page.polls[polls_before:]
    assert_accessible(page, "agent stage, pushed")
    assert page.errors == []
    page.context.close()


def test_twenty_forced_disconnects_miss_nothing_and_double_nothing(browser, runtime):
    created = runtime.stage_service.create_stage("disconnects")
    page = open_page(browser, runtime, created, COUNT_ENTRIES)
    wait_js(page, "document.body.dataset.push === 'live'", WAIT_MS)
    expected = []
    for i in range(20):
        assert runtime.push.sockets.close_all() >= 1          # 1001 going away, from the server's side
        wait_js(page, "document.body.dataset.push !== 'live'", WAIT_MS)
        expected.append(speak(runtime, created, f"切れている間の台詞 {i}")["id"])
        wait_js(page, "document.body.dataset.push === 'live'", WAIT_MS)
        expected.append(speak(runtime, created, f"つながってからの台詞 {i}")["id"])
        shown_in_log(page, f"つながってからの台詞 {i}")
    shown_in_log(page, "つながってからの台詞 19")
    ids = page.eval_on_selector_all("#log li", "els => els.map(e => e.dataset.id)")
    assert ids == expected                                     # every line, once, in order
    counts = page.evaluate("() => window.__shown")
    assert counts == {entry: 1 for entry in expected}          # none was put on the screen twice
    # The bubble steps through the lines as a player reads them; read on, its last is the newest.
    assert read_turn(page)[-1][1] == "つながってからの台詞 19"
    # The reconnects caught up with one conditional GET each, not by polling all along.
    assert len(page.polls) <= 2 * 20 + 2, len(page.polls)
    assert page.errors == []
    page.context.close()


def test_without_a_socket_the_page_polls_and_retries_with_growing_pauses(browser, runtime):
    created = runtime.stage_service.create_stage("no-socket")
    attempts = []

    def refuse(ws):                        # the socket opens and drops at once, as a proxy that blocks it
        attempts.append(time.monotonic())
        ws.close()

    page = open_page(browser, runtime, created, route=refuse)
    speak(runtime, created, "ポーリングで届きます")
    page.wait_for_selector("#speech-text:text-is('ポーリングで届きます')", timeout=WAIT_MS)
    page.wait_for_timeout(9000)            # Playwright answers the socket attempts while it waits
    assert page.evaluate("document.body.dataset.push") != "live"
    # Pauses of 1–2 s, 2–4 s, 4–8 s … (doubling, with jitter): a few tries in 10 s, not a tight loop.
    pauses = [b - a for a, b in zip(attempts, attempts[1:])]
    assert 3 <= len(attempts) <= 5, pauses
    assert pauses[0] >= 0.9 and max(pauses) >= 1.9, pauses
    polls = len(page.polls)
    assert polls >= 3                                          # every 3 s meanwhile
    assert page.errors == []
    page.context.close()


def test_a_hidden_tab_holds_no_socket_and_catches_up_when_shown(browser, runtime):
    created = runtime.stage_service.create_stage("hidden")
    page = open_page(browser, runtime, created, HIDEABLE)
    wait_js(page, "document.body.dataset.push === 'live'", WAIT_MS)
    before = runtime.push.sockets.count()
    page.evaluate("() => { window.__hidden = true; document.dispatchEvent(new Event('visibilitychange')); }")
    wait_js(page, "document.body.dataset.push === 'off'", WAIT_MS)
    deadline = time.monotonic() + WAIT_MS / 1000
    while runtime.push.sockets.count() != before - 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runtime.push.sockets.count() == before - 1          # the server holds no socket for it
    speak(runtime, created, "隠れている間の台詞")
    time.sleep(1.5)
    assert page.evaluate("document.body.dataset.push") == "off"
    page.evaluate("() => { window.__hidden = false; document.dispatchEvent(new Event('visibilitychange')); }")
    page.wait_for_selector("#speech-text:text-is('隠れている間の台詞')", timeout=WAIT_MS)
    wait_js(page, "document.body.dataset.push === 'live'", WAIT_MS)
    assert page.errors == []
    page.context.close()


def test_long_lines_join_the_log_and_missed_pushes_are_fetched(browser, runtime):
    """Lines of 2,000 characters make views larger than one 32 KB message: each push carries the newest
    entries after a named one. Six pushes in a row are lost on the way (a proxy drops them), so the next
    one follows an entry the page never got: the page fetches, and shows every line once, in order."""
    created = runtime.stage_service.create_stage("long-lines")
    views, lost = [], []

    def proxy(ws):
        server = ws.connect_to_server()

        def from_server(message):
            data = json.loads(message)
            if data.get("type") == "view":
                views.append(data)
                if 3 <= len(views) <= 8:
                    lost.append(data["view"]["version"])
                    return
            ws.send(message)
        server.on_message(from_server)

    page = open_page(browser, runtime, created, COUNT_ENTRIES, route=proxy)
    wait_js(page, "document.body.dataset.push === 'live'", WAIT_MS)
    expected = []
    for i in range(10):
        expected.append(speak(runtime, created, f"{i:02d}" + "長" * 1998)["id"])
        deadline = time.monotonic() + WAIT_MS / 1000
        while len(views) < i + 1 and time.monotonic() < deadline:
            page.wait_for_timeout(20)          # Playwright runs the proxy's handlers while it waits
    wait_js(page, f"document.body.dataset.version === {expected[-1]!r}", WAIT_MS)
    assert len(lost) == 6 and all("after" in v for v in views[5:]), [sorted(v) for v in views]
    polls_before_gap = [u for u in page.polls]
    ids = page.eval_on_selector_all("#log li", "els => els.map(e => e.dataset.id)")
    assert ids == expected
    assert page.evaluate("() => window.__shown") == {entry: 1 for entry in expected}
    assert len(polls_before_gap) >= 2                          # the subscription's catch-up and the gap's fetch
    assert page.errors == []
    page.context.close()
