"""Turn after turn on a phone (390×844, Chromium, touch): what the player must see stays on the screen.

After every turn of a played visit and of an agent's lines: the faces and the current line are inside
the viewport and above the sticky composer (the page scrolls itself when a line would be covered), the
log has scrolled to its newest entry, 「送信しました…」 is gone once the answer is there, and a character
who says nothing this turn rests (neutral). The page's icons are drawn (inline SVG), not emoji, and axe
finds nothing. Screenshots of each turn land in test-output/browser/phone/turns/.
"""
import pytest

from tests.browser.accessibility import assert_accessible, settle
from tests.browser.test_phone_and_access import services  # noqa: F401 - the module's fixture
from tests.browser.test_stage_page import SHOTS, speak, wait_js
from tests.scenario_stages import new_scenario_stage

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
TURN_MS = 15000
TURN_SHOTS = SHOTS / "phone" / "turns"

# Where things are as the screen stands (no scrolling by the test).
LAYOUT = """() => {
  const rect = (el) => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const region = document.getElementById('log-region');
  return {
    height: window.innerHeight,
    composer: rect(document.querySelector('.reply-card')),
    line: document.getElementById('speech').hidden ? null : rect(document.getElementById('speech-text')),
    faces: Array.from(document.querySelectorAll('#cast .cast-image, #portrait:not([hidden]) #character-image'))
      .map(rect),
    logAtEnd: region.scrollHeight - region.scrollTop - region.clientHeight < 2,
    note: document.getElementById('reply-note').hidden ? null : document.getElementById('reply-note').textContent,
  };
}"""


def assert_in_view(page, when):
    seen = page.evaluate(LAYOUT)
    above = seen["composer"]["top"]
    if seen["line"] is not None:
        assert 0 <= seen["line"]["top"] and seen["line"]["bottom"] <= above, f"{when}: the line is covered: {seen}"
    assert seen["faces"], when
    for face in seen["faces"]:
        assert 0 <= face["top"] and face["bottom"] <= above, f"{when}: a face is off the screen: {seen}"
    assert seen["logAtEnd"], f"{when}: the log shows older entries than the newest: {seen}"
    return seen


def shoot(page, name):
    TURN_SHOTS.mkdir(parents=True, exist_ok=True)
    settle(page)                                      # the new line's fade-in has ended
    page.screenshot(path=str(TURN_SHOTS / f"{name}.png"))


def faces(page):
    return dict(page.eval_on_selector_all(
        "#cast .cast-member", "els => els.map(e => [e.dataset.character, e.querySelector('.cast-image').dataset.expression])"))


def play(page, text):
    before = page.eval_on_selector_all("#log li", "els => els.length")
    page.fill("#reply-text", text)
    page.click("#reply-submit")
    wait_js(page, f"document.querySelectorAll('#log li').length > {before} && "
                  "!document.getElementById('reply-submit').disabled", TURN_MS)
    page.evaluate("() => new Promise(requestAnimationFrame)")


def test_a_visit_keeps_faces_line_and_log_in_view_turn_after_turn(browser, local_runtime):
    stage = new_scenario_stage(local_runtime, "phone-turns")
    page = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    page.goto(f"{local_runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("#cast .cast-member")
    wait_js(page, "document.body.dataset.push === 'live'", TURN_MS)
    assert_in_view(page, "opened")
    shoot(page, "scenario-0-open")

    turns = ["こんばんは",                         # three lines: ママ, ママ, 葵
             "流す曲を変えてみたら？",              # ママ, then 葵 angry
             "ママ、きれいですね",                   # ママ answers alone
             "前に借りたお金のこと、ちゃんと話したい",
             "うん、行こ",                          # a move: one person, a larger picture
             "店に戻ろっか"]                        # and back
    for n, text in enumerate(turns, 1):
        play(page, text)
        seen = assert_in_view(page, f"after {text!r}")
        assert seen["note"] is None, f"after {text!r}: the sent note stayed: {seen['note']}"
        shoot(page, f"scenario-{n}")
        if text == "流す曲を変えてみたら？":
            assert faces(page)["神楽坂葵"] == "angry"
        if text == "ママ、きれいですね":
            # Only ママ answers: 葵 says nothing this turn and rests, however angry she was a turn ago.
            assert faces(page) == {"赤尾妙子": "smile", "神楽坂葵": "neutral"}
    assert page.get_attribute("#voice-toggle svg.voice-icon-off", "aria-hidden") == "true"
    assert_accessible(page, "scenario stage, turn after turn, 390x844")
    page.close()


def test_an_agents_lines_keep_the_portrait_and_line_in_view(browser, local_runtime, services):  # noqa: F811
    api = local_runtime.info["api_url"]
    stage = services.stage.create_stage("phone-agent-turns")
    speak(api, stage, "こんばんは。", "smile")
    page = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    page.goto(f"{api}/#stage={stage.stage_id}&key={stage.player_key}")
    page.wait_for_selector("body[data-state=ready]")
    wait_js(page, "document.body.dataset.push === 'live'", TURN_MS)
    lines = ["今日はどんな一日でしたか？", "それはよかった。" * 6, "また明日もここで待っています。"]
    for n, line in enumerate(lines, 1):
        page.fill("#reply-text", f"返事 {n}")
        page.click("#reply-submit")
        page.wait_for_selector("#reply-note:not([hidden])")
        assert page.inner_text("#reply-note") == "送信しました。応答をお待ちください"
        speak(api, stage, line, "smile")
        page.wait_for_selector("#reply-note", state="hidden", timeout=TURN_MS)   # the answer is there
        assert page.inner_text("#speech-text") == line
        page.evaluate("() => new Promise(requestAnimationFrame)")
        assert_in_view(page, f"after line {n}")
        shoot(page, f"agent-{n}")
    assert_accessible(page, "agent stage, turn after turn, 390x844")
    page.close()


def test_icons_need_no_emoji_font(browser, local_runtime, services):  # noqa: F811
    """Nothing the page draws as an icon is a character from the emoji or symbol blocks (which show as
    empty boxes where no emoji font is installed): the 読み上げ icon and the addressee's check are SVG."""
    stage = new_scenario_stage(local_runtime, "icons")
    page = browser.new_page(viewport=PHONE)
    page.goto(f"{local_runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("#cast .cast-member")
    page.click("#cast .cast-member")                  # the addressee's check mark
    page.click("#voice-toggle")                        # the 読み上げ icon, switched on
    found = page.evaluate("""() => {
        const symbol = /[\\u2190-\\u21FF\\u2300-\\u23FF\\u2600-\\u27BF\\u2B00-\\u2BFF\\uFE0F]|[\\uD83C-\\uD83E][\\uDC00-\\uDFFF]/;
        const found = [];
        for (const el of document.querySelectorAll('body *')) {
          if (el.closest('#log, #speech-text')) continue;    // what characters and players say is theirs
          for (const pseudo of ['::before', '::after']) {
            const content = getComputedStyle(el, pseudo).content;
            if (content && content !== 'none' && symbol.test(content)) found.push([el.id || el.className, pseudo, content]);
          }
          for (const node of el.childNodes) {
            if (node.nodeType === 3 && symbol.test(node.textContent)) found.push([el.id || el.className, node.textContent]);
          }
        }
        return found;
    }""")
    assert found == []
    icon = page.evaluate("""() => { const r = document.querySelector('#voice-toggle .voice-icon-on').getBoundingClientRect();
                                    return [r.width, r.height]; }""")
    assert icon == [18, 18]
    check = page.evaluate("getComputedStyle(document.querySelector('.cast-member.selected'), '::after').backgroundImage")
    assert check.startswith('url("data:image/svg+xml')
    page.close()
