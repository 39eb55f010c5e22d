"""Phone first, and for everyone: both stage kinds at phone sizes in real Chromium.

The reply box is on screen without scrolling (after load and after several replies), axe-core
finds nothing in any state, new lines are announced with their speaker, pictures are described
in Japanese, focus stays in the text box after 送信, and the keyboard shortcut is not offered on a
touch screen. Screenshots of what a person sees land in test-output/browser/phone/.
"""
import shutil

import pytest

from butai_tools.stage import images
from chalicelib import aws, context
from chalicelib.config import Settings
from tests.browser.accessibility import assert_accessible, assert_composer_visible
from tests.browser.reading import read_turn
from tests.browser.test_stage_page import POLL_WAIT_MS, SHOTS, fetch, no_horizontal_scroll, speak, wait_js
from tests.conftest import ROOT

pytestmark = pytest.mark.browser
PHONES = [(360, 740), (390, 844)]
TURN_MS = 15000
PHONE_SHOTS = SHOTS / "phone"


@pytest.fixture(scope="module")
def services(local_runtime):
    return context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"]))


def scenario_stage(services, name):
    director = services.director
    return director.create(name, director.library.put(ROOT / "scenarios" / "chinoike.json"))


def open_stage(browser, local_runtime, stage, size, debug=False, **context_options):
    context_ = browser.new_context(viewport={"width": size[0], "height": size[1]}, **context_options)
    page = context_.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    fragment = f"#stage={stage.stage_id}&key={stage.player_key}" + ("&debug=1" if debug else "")
    page.goto(f"{local_runtime.info['api_url']}/{fragment}")
    page.wait_for_selector("body[data-state=ready]", timeout=TURN_MS)  # a scenario's first view loads it
    return page


def log_count(page):
    return page.eval_on_selector_all("#log li", "els => els.length")


def send_from_form(page, text, wait_for_answer=True):
    """Types and sends as a person does; the composer must be reachable before each tap."""
    assert_composer_visible(page, f"before sending {text!r}")
    before = log_count(page)
    page.fill("#reply-text", text)
    page.click("#reply-submit")
    expected = before + (2 if wait_for_answer else 1)
    wait_js(page, f"document.querySelectorAll('#log li').length >= {expected} && "
                  "!document.getElementById('reply-submit').disabled", TURN_MS)


def shoot(page, name):
    PHONE_SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(PHONE_SHOTS / f"{name}.png"))  # what the screen shows
    # scrolled to the end (a full-page shot would misplace the sticky composer)
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.screenshot(path=str(PHONE_SHOTS / f"{name}-end.png"))
    assert_composer_visible(page, "scrolled to the end")
    page.evaluate("window.scrollTo(0, 0)")


@pytest.mark.parametrize("size", PHONES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_agent_stage_on_a_phone(browser, local_runtime, services, size):
    api = local_runtime.info["api_url"]
    stage = services.stage.create_stage(f"phone-{size[0]}")
    speak(api, stage, "こんばんは。今日はどんな一日でしたか？", "smile")
    page = open_stage(browser, local_runtime, stage, size)
    wait_js(page, "document.getElementById('character-image').naturalWidth > 0")
    assert_composer_visible(page, "after load")
    assert_accessible(page, f"agent stage, fresh, {size}")

    answers = [("ちょっと疲れたけど、楽しかったよ", "troubled", "それはよかったです……でも、無理はしないでくださいね。"),
               ("ありがとう。ひよりは？", "embarrassed", "わたしですか？　えっと、ずっとあなたを待っていました。"),
               ("また明日も来るね", "determined", "はい！　明日も、ここで待っています。")]
    for reply, expression, line in answers:
        send_from_form(page, reply, wait_for_answer=False)
        assert [r["text"] for r in fetch(api, stage)] == [reply]
        speak(api, stage, line, expression)
        page.wait_for_selector(f"#character-image[data-expression={expression}]", timeout=POLL_WAIT_MS)
    assert_composer_visible(page, "after three replies")
    assert no_horizontal_scroll(page)
    assert page.get_attribute("#character-image", "alt") == "ひより（決意）"
    assert_accessible(page, f"agent stage, after replies, {size}")
    shoot(page, f"agent-{size[0]}x{size[1]}")
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("size", PHONES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_scenario_stage_on_a_phone(browser, local_runtime, services, size):
    stage = scenario_stage(services, f"phone-{size[0]}")
    page = open_stage(browser, local_runtime, stage, size, debug=True)
    page.wait_for_selector("#cast .cast-member")
    assert_composer_visible(page, "after load")
    assert_accessible(page, f"scenario stage, fresh, {size}")

    for text in ("こんばんは", "流す曲を変えてみたら？", "素敵なお店ですね"):
        send_from_form(page, text)
    assert_composer_visible(page, "after three replies")
    assert no_horizontal_scroll(page)
    assert_accessible(page, f"scenario stage, after replies, {size}")

    # A character chosen as the one spoken to: the chip and the hint above the form.
    page.click("#cast [data-character=神楽坂葵]")
    page.wait_for_selector("#addressee:not([hidden])")
    assert_composer_visible(page, "with an addressee chosen")
    assert_accessible(page, f"scenario stage, addressee selected, {size}")
    shoot(page, f"scenario-{size[0]}x{size[1]}")

    # The development view opened below the form.
    page.wait_for_selector("#debug:not([hidden])", timeout=TURN_MS)
    page.click("#debug summary")
    page.wait_for_selector("#debug[open] .debug-section")
    assert_accessible(page, f"scenario stage, debug view open, {size}")
    assert page.errors == []
    page.context.close()


def test_lines_are_announced_with_their_speaker(browser, local_runtime, services):
    stage = scenario_stage(services, "announce")
    page = open_stage(browser, local_runtime, stage, PHONES[1])
    page.wait_for_selector("#cast .cast-member")
    read_turn(page)                                   # the opening read to its last line: 葵 speaks
    # Pictures and cast buttons are described in Japanese; the speaking badge is spelled out.
    assert page.eval_on_selector_all("#cast .cast-member", "els => els.map(e => e.getAttribute('aria-label'))") == [
        "ママ（笑顔）", "話し中 葵（ふつう）"]
    assert page.get_by_role("button", name="話し中 葵（ふつう）").count() == 1

    assert page.get_by_role("log", name="会話の記録").count() == 1
    # The history already there when the page opens is not read out; what comes after is.
    wait_js(page, "document.getElementById('log-region').getAttribute('aria-live') === 'polite'")
    assert page.get_attribute("#speech-text", "aria-live") is None  # one announcement per line, from the log
    before = log_count(page)
    send_from_form(page, "流す曲を変えてみたら？")
    new = page.eval_on_selector_all(
        "#log li", f"""els => els.slice({before}).map(e => {{
            const heard = e.cloneNode(true);  // what a screen reader gets: no aria-hidden parts
            heard.querySelectorAll('[aria-hidden=true]').forEach(n => n.remove());
            return Array.from(heard.querySelectorAll('*')).filter(n => !n.children.length)
                .map(n => n.textContent.trim()).filter(Boolean).join(' ');
        }})""")
    # Each line is read as 「speaker text」: the minute is for the eye only.
    assert new[0] == "あなた 流す曲を変えてみたら？"
    assert len(new) >= 2 and all(line.split(" ", 1)[0] in ("ママ", "葵") for line in new[1:]), new
    assert page.eval_on_selector_all(
        "#log li .entry-time", "els => els.length > 0 && els.every(e => e.getAttribute('aria-hidden') === 'true')")
    labels = page.eval_on_selector_all("#cast .cast-member", "els => els.map(e => e.getAttribute('aria-label'))")
    assert labels and not any(c.isascii() and c.isalpha() for label in labels for c in label), labels

    # The log scrolls from the keyboard: it takes focus and moves with the arrow keys.
    page.focus("#log-region")
    page.evaluate("document.getElementById('log-region').scrollTop = 0")
    page.keyboard.press("End")
    wait_js(page, "document.getElementById('log-region').scrollTop > 0")
    page.context.close()


def test_focus_stays_in_the_text_box_after_sending(browser, local_runtime, services):
    api = local_runtime.info["api_url"]
    stage = services.stage.create_stage("focus")
    speak(api, stage, "どうぞ", "neutral")
    page = open_stage(browser, local_runtime, stage, PHONES[1])
    assert page.get_by_role("img", name="ひより（ふつう）").count() == 1
    # By the button: focus comes back to the text box, not the body.
    page.fill("#reply-text", "ボタンで送る")
    page.click("#reply-submit")
    page.wait_for_selector("#log li.role-player", timeout=POLL_WAIT_MS)
    wait_js(page, "!document.getElementById('reply-submit').disabled")
    assert page.evaluate("document.activeElement.id") == "reply-text"
    # By the keyboard: Tab to 送信 and Enter, then Ctrl+Enter from the text box.
    page.fill("#reply-text", "キーボードで送る")
    page.focus("#reply-submit")
    page.keyboard.press("Enter")
    wait_js(page, "document.querySelectorAll('#log li.role-player').length === 2 && "
                  "!document.getElementById('reply-submit').disabled")
    assert page.evaluate("document.activeElement.id") == "reply-text"
    page.keyboard.type("ショートカット")
    page.keyboard.press("Control+Enter")
    wait_js(page, "document.querySelectorAll('#log li.role-player').length === 3 && "
                  "!document.getElementById('reply-submit').disabled")
    assert page.evaluate("document.activeElement.id") == "reply-text"
    assert [r["text"] for r in fetch(api, stage)] == ["ボタンで送る", "キーボードで送る", "ショートカット"]
    # The Ctrl+Enter hint is offered where there is a keyboard ...
    assert page.is_visible(".reply-shortcut")
    page.context.close()


def contrast(rgb_a, rgb_b):
    def luminance(rgb):
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    hi, lo = sorted((luminance(rgb_a), luminance(rgb_b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_every_focus_ring_is_visible(browser, local_runtime, services):
    """Tab through the scenario page: each stop draws a solid ring of at least 3:1 against
    the card and the page behind it (the log's ring is drawn on its card)."""
    stage = scenario_stage(services, "focus-rings")
    page = open_stage(browser, local_runtime, stage, PHONES[1], debug=True)
    page.wait_for_selector("#debug:not([hidden])", timeout=TURN_MS)
    seen = {}
    for _ in range(12):
        page.keyboard.press("Tab")
        stop = page.evaluate("""() => {
            const el = document.activeElement;
            if (el === document.body) return null;  // past the last stop
            const ringed = el.id === 'log-region' ? el.closest('.log-card') : el;
            const cs = getComputedStyle(ringed);
            return {name: el.id || el.className || el.tagName, style: cs.outlineStyle,
                    width: parseFloat(cs.outlineWidth), color: cs.outlineColor};
        }""")
        if stop is None:
            break
        seen[stop["name"]] = stop
    assert {"cast-member", "log-region", "reply-text", "reply-submit", "debug-summary"} <= {
        name.split(" ")[0] for name in seen}, seen
    page_colours = [(255, 255, 255), (0xd3, 0xe3, 0xe6), (0xdc, 0xe9, 0xec)]  # card, page, stage backdrop
    for name, stop in seen.items():
        parts = [float(v) for v in stop["color"][stop["color"].index("(") + 1:-1].split(",")]
        rgb, alpha = parts[:3], (parts[3] if len(parts) == 4 else 1.0)
        assert stop["style"] == "solid" and stop["width"] >= 2, stop
        # a translucent ring is seen blended with what lies under it
        assert min(contrast([alpha * c + (1 - alpha) * b for c, b in zip(rgb, bg)], bg)
                   for bg in page_colours) >= 3, (name, stop)
    page.context.close()


def test_no_shortcut_hint_on_a_touch_screen(browser, local_runtime, services):
    api = local_runtime.info["api_url"]
    stage = services.stage.create_stage("touch")
    speak(api, stage, "タップで返事をどうぞ", "smile")
    page = open_stage(browser, local_runtime, stage, PHONES[1], has_touch=True, is_mobile=True)
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    # ... and neither shown nor read out on a phone: display:none leaves the description too.
    assert not page.is_visible(".reply-shortcut")
    described = page.evaluate("""() => document.getElementById('reply-text').getAttribute('aria-describedby')
        .split(' ').map(id => document.getElementById(id)).filter(e => e && e.checkVisibility())
        .map(e => e.innerText).join(' ')""")
    assert "Enter" not in described and "0 / 1000" in described
    assert_composer_visible(page, "on a touch screen")
    page.context.close()


def test_an_unknown_expression_is_not_read_in_english(browser, local_runtime, services, tmp_path):
    api = local_runtime.info["api_url"]
    settings = Settings(aws_endpoint=local_runtime.info["aws_endpoint"])
    folder = tmp_path / "sleepy"
    shutil.copytree(ROOT / "static/characters/hiyori", folder)
    shutil.copy(folder / "smile.svg", folder / "sleepy.svg")
    images.upload_image_set(aws.client("s3", settings), settings.bucket, images.read_image_dir(folder, "sleepy"))
    stage = services.stage.create_stage("sleepy", "sleepy")
    speak(api, stage, "ふわあ……", "sleepy")
    page = open_stage(browser, local_runtime, stage, PHONES[0])
    page.wait_for_selector("#character-image[data-expression=sleepy]")
    assert page.get_attribute("#character-image", "alt") == "ひより"
    page.context.close()


def test_the_axe_check_catches_what_it_should(browser):
    """The helper is not vacuous: a picture without words and pale text fail it."""
    page = browser.new_page()
    page.set_content('<!doctype html><html lang="ja"><title>t</title><main><h1>見出し</h1>'
                     '<img src="data:," width="10" height="10"><p style="color:#bbb">薄い字</p></main></html>')
    with pytest.raises(AssertionError) as caught:
        assert_accessible(page, "self-check")
    assert "image-alt" in str(caught.value) and "color-contrast" in str(caught.value)
    page.close()
