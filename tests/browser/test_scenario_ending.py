"""A whole visit on a phone (390×844): greeting → topic → move → goodbye → ending card → 「もう一度」."""
import pytest

from tests.browser.accessibility import assert_accessible
from tests.browser.test_scenario_page import TURN_MS, log_texts, send
from tests.browser.test_stage_page import SHOTS, no_horizontal_scroll, wait_js
from tests.scenario_stages import open_on_a_phone

pytestmark = pytest.mark.browser


def bubble(page):
    return page.evaluate("""() => ({hidden: document.getElementById('speech').hidden,
                                   speaker: document.getElementById('speaker-name').textContent,
                                   text: document.getElementById('speech-text').textContent})""")


def test_a_visit_ends_and_starts_again_on_a_phone(browser, local_runtime):
    page, errors = open_on_a_phone(browser, local_runtime, "phone-visit")

    send(page, "こんばんは")                      # greeting: ママ's reaction, not a brush-off
    assert "いらっしゃい。ゆっくりしていって。" in log_texts(page)[-4:]
    send(page, "前に借りたお金のこと、ちゃんと話したい")   # topic: 葵 invites the player to the back room
    assert log_texts(page)[-1] == "……その話、ここでするの？　続きは控え室で話さない？"
    send(page, "うん、行こ")                      # a short yes right after the invitation moves
    assert page.inner_text("#place-name").endswith("控え室")
    # the bubble shows 葵 (present), never ママ who stayed in the shop
    assert bubble(page)["speaker"] == "葵" and not bubble(page)["hidden"]
    send(page, "店に戻ろっか")
    assert page.inner_text("#place-name").endswith("店内")
    assert log_texts(page)[-1] == "おかえり。奥で葵ちゃんと何を話してたの？"   # arrival reaction

    page.fill("#reply-text", "ごちそうさま、また来るね")
    page.click("#reply-submit")
    page.wait_for_selector("#ending:not([hidden])", timeout=TURN_MS)
    assert page.inner_text("#ending-title") == "血の池の夜　おしまい"
    assert page.eval_on_selector_all("#destinations button", "els => els.length") == 0   # no staff room on goodbye
    texts = log_texts(page)
    assert texts[-3:-1] == ["もう帰るの？　また来てちょうだいね。赤いドアは、いつでも開いてるから。",
                            "今日はありがと。……また来てね。"]
    assert page.get_attribute("#ending", "aria-labelledby") == "ending-title"
    wait_js(page, "document.activeElement && document.activeElement.id === 'restart'")
    assert no_horizontal_scroll(page)
    assert_accessible(page, "ending card")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "scenario-ending-390.png"), full_page=True)

    page.click("#restart")
    page.wait_for_selector("#ending", state="hidden", timeout=TURN_MS)
    wait_js(page, "Array.from(document.querySelectorAll('#log li .entry-text')).slice(-1)[0].textContent"
                  ".startsWith('ママ、その話はあと')", TURN_MS)
    assert page.inner_text("#place-name").endswith("店内")
    assert errors == []
    page.close()
