"""A conversation that listens, on a phone (390×844) in real Chromium: a drink is ordered and served, the same
question asked twice gets the fact back without the same line twice, the visit ends, the composer then offers
only 「もう一度」 and a way out, and a restart is a control (no line logged, no second 「おしまい」)."""
import pytest

from tests.browser.accessibility import assert_accessible
from tests.browser.test_scenario_page import TURN_MS, log_texts, send
from tests.browser.test_stage_page import SHOTS, no_horizontal_scroll, wait_js
from tests.scenario_stages import open_on_a_phone

pytestmark = pytest.mark.browser


def visible(page, selector: str) -> bool:
    return page.evaluate("s => { const e = document.querySelector(s); return !!e && !e.closest('[hidden]') && "
                         "e.getClientRects().length > 0; }", selector)


def test_order_ask_twice_and_end_on_a_phone(browser, local_runtime):
    page, errors = open_on_a_phone(browser, local_runtime, "phone-conversation")

    send(page, "こんばんは")
    # an order names an item of ママ's menu: served in her voice, not the menu speech
    send(page, "とりあえずビールください")
    served = log_texts(page)[-1]
    assert served == "はい、ビール。よく冷えてるわよ。"
    assert "うちの名物はナポリタンとおでん。昼に喫茶をやってたころからの味なの。" not in log_texts(page)

    # the same question twice: what ママ said (三十年) comes back, never the same line twice
    send(page, "このお店、何年やってるの？")
    first = log_texts(page)[-1]
    send(page, "で、何年だっけ？")
    second = log_texts(page)[-1]
    assert "三十年" in first and "三十年" in second and first != second
    said = [t for t in log_texts(page)]
    assert said.count(first) == 1 and said.count(second) == 1

    # the visit ends: the card, and a composer with only 「もう一度」 and a way out
    page.fill("#reply-text", "ごちそうさま、また来ます")
    page.click("#reply-submit")
    page.wait_for_selector("#ending:not([hidden])", timeout=TURN_MS)
    assert not visible(page, "#reply-form") and not visible(page, "#reply-text")
    buttons = page.eval_on_selector_all("main button", "els => els.filter(b => !b.closest('[hidden]') && "
                                        "b.getClientRects().length).map(b => b.textContent)")
    assert [b for b in buttons if b in ("もう一度", "ここで終わる", "送信")] == ["もう一度", "ここで終わる"]
    assert log_texts(page).count("血の池の夜　おしまい") == 1
    assert no_horizontal_scroll(page)
    assert_accessible(page, "ending with the way out")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "conversation-ending-390.png"), full_page=True)

    page.click("#ending-leave")            # the way out: the card says the visit is over, the page may close
    assert visible(page, "#ending-closed") and not visible(page, "#ending-leave") and visible(page, "#restart")

    before = log_texts(page)
    page.click("#restart")
    page.wait_for_selector("#ending", state="hidden", timeout=TURN_MS)
    wait_js(page, "Array.from(document.querySelectorAll('#log li .entry-text')).slice(-1)[0].textContent"
                  ".startsWith('ママ、その話はあと')", TURN_MS)
    after = log_texts(page)
    assert "もう一度" not in after[len(before):]           # a control, not a line the player said
    assert after.count("血の池の夜　おしまい") == 1
    assert visible(page, "#reply-form") and visible(page, "#reply-text")
    assert errors == []
    page.close()
