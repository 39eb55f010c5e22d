"""The stage page in real headless Chromium against the local runtime.

Covers the browser half of the stage design's verification checklist (§10):
expression changes swap the image, replies from the form land in the log with
the sent note, no broken images or horizontal scrolling at phone width, and a
line spoken while the page was closed is there when it is opened again.
"""
import json
import time
import urllib.request

import pytest

from butai_tools.stage import images
from chalicelib import aws, context
from chalicelib.config import Settings
from tests.conftest import OUTPUT, ROOT

pytestmark = pytest.mark.browser
SHOTS = OUTPUT / "browser"
POLL_WAIT_MS = 5000  # one poll is about 3 s


@pytest.fixture(scope="module")
def runtime_services(local_runtime):
    return context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"]))


def speak(api, stage, text, expression="neutral"):
    req = urllib.request.Request(f"{api}/stages/{stage.stage_id}/speak", method="POST",
                                 data=json.dumps({"text": text, "expression": expression}).encode(),
                                 headers={"Authorization": f"Bearer {stage.agent_key}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read())


def fetch(api, stage):
    req = urllib.request.Request(f"{api}/stages/{stage.stage_id}/fetch_replies", method="POST",
                                 headers={"Authorization": f"Bearer {stage.agent_key}"})
    with urllib.request.urlopen(req) as resp:
        return json.loads(resp.read())


def open_page(browser, api, stage, width=360, height=800):
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and "404" not in msg.text else None)
    requests = []
    page.on("request", lambda req: requests.append(req.url))
    page.goto(f"{api}/#stage={stage.stage_id}&key={stage.player_key}")
    page.wait_for_selector("body[data-state=ready]", timeout=POLL_WAIT_MS)
    page.errors, page.seen_urls = errors, requests
    return page


def wait_js(page, expression, timeout_ms=POLL_WAIT_MS):
    """Polls a JS expression from Python: the page's CSP forbids the eval that
    Playwright's own wait_for_function relies on."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        if page.evaluate(f"() => Boolean({expression})"):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {expression}")
        time.sleep(0.05)


def no_horizontal_scroll(page):
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_checklist_in_a_real_browser(browser, local_runtime, runtime_services):
    api = local_runtime.info["api_url"]
    stage = runtime_services.stage.create_stage("browser")
    # Spoken while nobody had the page open: shown on first open.
    speak(api, stage, "ようこそ、舞台へ。", "smile")
    page = open_page(browser, api, stage)
    assert page.inner_text("#speech-text") == "ようこそ、舞台へ。"
    assert page.get_attribute("#character-image", "data-expression") == "smile"
    wait_js(page, "document.getElementById('character-image').naturalWidth > 0")
    assert no_horizontal_scroll(page)

    # A reply from the form: in the log as the player, field emptied, note shown.
    page.fill("#reply-text", "こんばんは、ひよりさん")
    page.click("#reply-submit")
    page.wait_for_selector("#reply-note:not([hidden])")
    assert page.inner_text("#reply-note") == "送信しました。応答をお待ちください"
    assert page.input_value("#reply-text") == ""
    page.wait_for_selector("#log li.role-player .entry-text:text('こんばんは、ひよりさん')", timeout=POLL_WAIT_MS)
    assert [r["text"] for r in fetch(api, stage)] == ["こんばんは、ひよりさん"]
    assert fetch(api, stage) == []

    # The agent answers with another expression: line and image change within one poll.
    speak(api, stage, "あ、来てくれたんですね！", "embarrassed")
    page.wait_for_selector("#character-image[data-expression=embarrassed]", timeout=POLL_WAIT_MS)
    assert page.inner_text("#speech-text") == "あ、来てくれたんですね！"
    assert page.get_attribute("#character-image", "src").endswith("/characters/hiyori/embarrassed.svg")
    wait_js(page, "document.getElementById('character-image').naturalWidth > 0")
    texts = page.eval_on_selector_all("#log li .entry-text", "els => els.map(e => e.textContent)")
    assert texts == ["ようこそ、舞台へ。", "こんばんは、ひよりさん", "あ、来てくれたんですね！"]

    # The key never travels in a URL.
    assert all(stage.player_key not in url for url in page.seen_urls)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "stage-360.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    assert no_horizontal_scroll(page)
    page.screenshot(path=str(SHOTS / "stage-1280.png"), full_page=True)
    assert page.errors == []
    page.close()

    # Closed, then spoken to, then reopened: the newest line is there.
    speak(api, stage, "また来てくださいね。", "determined")
    again = open_page(browser, api, stage)
    assert again.inner_text("#speech-text") == "また来てくださいね。"
    assert again.get_attribute("#character-image", "data-expression") == "determined"
    again.close()


def test_text_from_agents_and_players_is_never_html(browser, local_runtime, runtime_services):
    api = local_runtime.info["api_url"]
    stage = runtime_services.stage.create_stage("xss")
    payload = '<img src=x onerror="window.__pwned=1"><b id="bold">太字</b><script>window.__pwned=2</script>'
    speak(api, stage, payload, "smile")
    page = open_page(browser, api, stage)
    page.fill("#reply-text", payload)
    page.click("#reply-submit")
    page.wait_for_selector("#log li.role-player", timeout=POLL_WAIT_MS)
    assert page.inner_text("#speech-text") == payload
    assert page.eval_on_selector_all("#log li .entry-text", "els => els.map(e => e.textContent)") == [payload, payload]
    assert page.query_selector("#bold") is None
    assert page.evaluate("window.__pwned === undefined")
    long_word = "あ" * 400 + "W" * 400
    speak(api, stage, long_word, "smile")
    wait_js(page, f"document.getElementById('speech-text').textContent.length === {len(long_word)}")
    assert no_horizontal_scroll(page)
    page.close()


def test_missing_expression_image_falls_back_to_neutral_in_the_page(browser, local_runtime, runtime_services):
    api = local_runtime.info["api_url"]
    settings = Settings(aws_endpoint=local_runtime.info["aws_endpoint"])
    s3 = aws.client("s3", settings)
    # A character whose manifest lists an image that has gone missing from the bucket.
    images.upload_image_set(s3, settings.bucket, images.read_image_dir(ROOT / "static/characters/hiyori", "lost"))
    s3.delete_object(Bucket=settings.bucket, Key="characters/lost/surprised.svg")
    stage = runtime_services.stage.create_stage("fallback", "lost")
    speak(api, stage, "えっ？", "surprised")
    page = open_page(browser, api, stage)
    wait_js(page,
            "document.getElementById('character-image').src.endsWith('/characters/lost/neutral.svg')"
            " && document.getElementById('character-image').naturalWidth > 0")
    page.close()


def test_the_player_key_never_goes_to_another_origin(browser, local_runtime, runtime_services):
    """The fragment's `api=` may only name a path on the page's own origin."""
    stage = runtime_services.stage.create_stage("api-origin")
    api = local_runtime.info["api_url"]
    page = browser.new_page(viewport={"width": 360, "height": 800})
    seen = []
    page.on("request", lambda req: seen.append(req.url))
    try:
        page.goto(f"{api}/#stage={stage.stage_id}&key={stage.player_key}&api=http://127.0.0.1:9/")
        wait_js(page, "document.body.dataset.state === 'invalid'")
        assert not [u for u in seen if not u.startswith(api)], seen
        page.goto(f"{api}/#stage={stage.stage_id}&key={stage.player_key}&api={api}/")
        page.reload()
        wait_js(page, "document.body.dataset.state === 'ready'")
    finally:
        page.close()
