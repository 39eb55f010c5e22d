"""Nothing covered, on two phones, with the on-screen keyboard closed and open: in every state of a visit
(the opening, a turn of three lines, the addressee's banner, the back room with one larger face, the
destinations, the ending card) the composer lies over neither the bubble's line nor the log's newest entry,
and each is wholly on the screen, as Chromium lays the page out. The keyboard is the visible screen shrunk by
its share (`reading.KEYBOARD_SHARE`). Screenshots of each state land in test-output/browser/phone/fit/, named
by size and keyboard, for a person to look at.
"""
import pytest

from tests.browser.accessibility import assert_accessible, settle
from tests.browser.reading import assert_nothing_covered, keyboard_size, open_keyboard, play, settle_frames
from tests.browser.test_stage_page import SHOTS, no_horizontal_scroll, wait_js
from tests.scenario_stages import new_scenario_stage

pytestmark = pytest.mark.browser
PHONES = [(390, 844), (360, 640)]
TURN_MS = 15000
FIT_SHOTS = SHOTS / "phone" / "fit"


def check(page, size, state, keyboard=True):
    """The state at the phone's full height and with the keyboard open; a screenshot of each."""
    FIT_SHOTS.mkdir(parents=True, exist_ok=True)
    name = f"{size[0]}x{size[1]}"
    page.set_viewport_size({"width": size[0], "height": size[1]})
    wait_js(page, f"document.documentElement.style.getPropertyValue('--app-h') === '{size[1]}px'")
    settle_frames(page)
    assert_nothing_covered(page, f"{state} at {name}")
    assert no_horizontal_scroll(page)
    settle(page)
    page.screenshot(path=str(FIT_SHOTS / f"{name}-{state}.png"))
    if not keyboard:
        return
    open_keyboard(page, size)
    small = keyboard_size(size)
    # on the smallest screen a long line may scroll inside its bubble (never under the composer)
    seen = assert_nothing_covered(page, f"{state} at {name}, keyboard open", line_may_scroll=small[1] < 440)
    if seen.get("lineScrolls"):
        assert seen["line"]["height"] >= 55, f"{state}: the bubble keeps two lines at least: {seen}"
    settle(page)
    page.screenshot(path=str(FIT_SHOTS / f"{name}-{state}-keyboard.png"))
    page.evaluate("() => document.activeElement && document.activeElement.blur()")   # the keyboard closes
    page.set_viewport_size({"width": size[0], "height": size[1]})
    wait_js(page, f"document.documentElement.style.getPropertyValue('--app-h') === '{size[1]}px'")


@pytest.mark.parametrize("size", PHONES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_composer_covers_nothing_with_the_keyboard_closed_or_open(browser, local_runtime, size):
    stage = new_scenario_stage(local_runtime, f"fit-{size[0]}")
    context_ = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=True, has_touch=True)
    page = context_.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{local_runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("#cast .cast-member")
    wait_js(page, "Array.from(document.images).every(i => i.complete)")
    check(page, size, "1-opening")

    play(page, "こんばんは")                                   # three lines
    check(page, size, "2-three-lines")
    page.click("#cast [data-character=神楽坂葵]")
    check(page, size, "3-addressee")
    assert_accessible(page, f"addressee banner, keyboard closed, {size}")
    play(page, "前に借りたお金のこと、ちゃんと話したい")
    play(page, "うん、行こ")                                   # the back room: one face, a larger one
    wait_js(page, "document.getElementById('place-name').textContent.endsWith('控え室')", TURN_MS)
    check(page, size, "4-back-room")
    play(page, "お邪魔しました")                               # the way out offered: destinations
    page.wait_for_selector("#destinations button.destination")
    check(page, size, "5-destinations")
    open_keyboard(page, size)
    assert_accessible(page, f"destinations, keyboard open, {size}")   # the headings stepped back, still named
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.click("#destinations button.destination")
    wait_js(page, "document.getElementById('place-name').textContent.endsWith('店内') && "
                  "!document.getElementById('reply-submit').disabled", TURN_MS)
    check(page, size, "6-back-in-the-shop")
    page.fill("#reply-text", "ごちそうさま、また来るね")
    page.click("#reply-submit")
    page.wait_for_selector("#ending:not([hidden])", timeout=TURN_MS)
    check(page, size, "7-ending", keyboard=False)           # no text box to type in: no keyboard
    assert errors == []
    context_.close()
