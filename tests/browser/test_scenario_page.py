"""The reference scenario played in real Chromium on the local run (the director's acceptance)."""
import pytest

from tests.browser.reading import read_turn
from tests.browser.test_stage_page import SHOTS, no_horizontal_scroll, wait_js
from tests.scenario_stages import new_scenario_stage

pytestmark = pytest.mark.browser
TURN_MS = 15000


def log_texts(page):
    return page.eval_on_selector_all("#log li .entry-text", "els => els.map(e => e.textContent)")


def cast(page):
    return page.eval_on_selector_all(
        "#cast .cast-member", "els => els.map(e => [e.dataset.character, "
        "e.querySelector('.cast-image').dataset.expression, e.classList.contains('speaking')])")


def send(page, text):
    before = len(log_texts(page))
    page.fill("#reply-text", text)
    page.click("#reply-submit")
    wait_js(page, f"document.querySelectorAll('#log li').length > {before + 1} && "
                  "!document.getElementById('reply-submit').disabled", TURN_MS)


def test_reference_scenario_in_the_browser(browser, local_runtime):
    api = local_runtime.info["api_url"]
    # A stage of its own: other tests (hypothesis, isolation) speak on the runtime's `chinoike`.
    stage = new_scenario_stage(local_runtime, "browser-reference")
    page = browser.new_page(viewport={"width": 360, "height": 800})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{api}/#stage={stage['stage_id']}&key={stage['player_key']}&debug=1")
    page.wait_for_selector("body[data-state=ready]")
    page.wait_for_selector("#cast .cast-member")
    # Opens on A01/A02 with ママ smiling.
    assert log_texts(page)[:2] == ["いらっしゃい。赤いドア、よく開けたわね。初めての人はたいてい素通りするのよ。",
                                   "ママ、その話はあと。ねえ聞いて、このお店、来月から少し変えようと思ってるの。"]
    # The bubble steps through the opening, each line with its speaker; at its end 葵 speaks.
    assert [speaker for speaker, _ in read_turn(page)] == ["ママ", "葵"]
    assert cast(page) == [["赤尾妙子", "smile", False], ["神楽坂葵", "neutral", True]]
    assert page.inner_text("#place-name").endswith("店内")

    send(page, "こんばんは")
    texts = log_texts(page)
    assert texts[-4:] == ["こんばんは", "いらっしゃい。ゆっくりしていって。",
                          "変えるって、葵ちゃんが一人で言ってるだけよ。うちは三十年このままでやってきたんだから。",
                          "……あなたはどう思う？"]

    send(page, "流す曲を変えてみたら？")
    assert log_texts(page)[-2:] == ["音楽は昭和歌謡よ、決まってるじゃない。……葵ちゃんの映画音楽？　あれ、眠くならない？",
                                    "失礼ね。夜に合うのよ、ああいうのが。"]
    assert [speaker for speaker, _ in read_turn(page)] == ["ママ", "葵"]
    assert ["神楽坂葵", "angry", True] in cast(page)
    assert page.get_attribute("#cast [data-character=神楽坂葵] .cast-image", "src").endswith("/angry.svg")
    wait_js(page, "document.querySelector('#cast [data-character=\"神楽坂葵\"] .cast-image').naturalWidth > 0")
    assert no_horizontal_scroll(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "scenario-360.png"), full_page=True)

    send(page, "控え室に行こう")
    assert log_texts(page)[-1] == "散らかっててごめんね。ここ、ママには内緒の作業場なの。"
    assert page.inner_text("#place-name").endswith("控え室")
    assert [c[0] for c in cast(page)] == ["神楽坂葵"]

    page.fill("#reply-text", "お邪魔しました")
    page.click("#reply-submit")
    page.wait_for_selector("#destinations button.destination[data-place=店内]", timeout=TURN_MS)
    # 「行き先」 once: the buttons' label, not also a notice in the log
    assert log_texts(page)[-1] == "お邪魔しました"
    assert page.eval_on_selector_all("#log li.role-notice", "els => els.length") == 0
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(SHOTS / "scenario-1280.png"), full_page=True)

    page.click("#destinations button.destination[data-place=店内]")
    wait_js(page, "document.getElementById('place-name').textContent.endsWith('店内')", TURN_MS)
    assert [c[0] for c in cast(page)] == ["赤尾妙子", "神楽坂葵"]
    page.wait_for_selector("#debug")
    assert errors == []
    page.close()
