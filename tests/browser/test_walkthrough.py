"""A whole game of the reference scenario on a 390×844 touch screen, as screenshots a person can page through:
test-output/browser/walkthrough/index.html shows every step with what was done and what the screen must show.

At every step the composer covers neither the bubble's line nor the log's newest entry; each line of every turn
is shown in the bubble in turn (read by tapping on, as a player does); the walk ends with 「ここで終わる」, a
reload, and 「もう一度」.
"""
import html

import pytest

from tests.browser.accessibility import assert_accessible, settle
from tests.browser.reading import assert_nothing_covered, bubble, open_keyboard, play, settle_frames
from tests.browser.test_stage_page import SHOTS, wait_js
from tests.scenario_stages import new_scenario_stage

pytestmark = pytest.mark.browser
PHONE = (390, 844)
TURN_MS = 15000
WALK = SHOTS / "walkthrough"


class Walk:
    def __init__(self, page):
        self.page = page
        self.steps: list[tuple[str, str]] = []
        WALK.mkdir(parents=True, exist_ok=True)
        for old in WALK.glob("*.png"):
            old.unlink()

    def shot(self, caption: str, **covered) -> None:
        settle_frames(self.page)
        assert_nothing_covered(self.page, caption, **covered)
        settle(self.page)
        name = f"{len(self.steps) + 1:02d}.png"
        self.page.screenshot(path=str(WALK / name))
        self.steps.append((name, caption))

    def read_turn(self, what: str) -> None:
        """A screenshot of each line of the turn in the bubble, tapping on from the first."""
        now = bubble(self.page)
        while True:
            self.shot(f"{what} — {now['step']}/{now['steps']}: {now['speaker']}「{now['text']}」")
            if now["step"] >= now["steps"]:
                return
            self.page.click("#speech-text")
            wait_js(self.page, f"document.getElementById('speech').dataset.step === '{now['step'] + 1}'")
            now = bubble(self.page)

    def turn(self, text: str) -> None:
        play(self.page, text)
        self.read_turn(f"「{text}」と送った")

    def write_index(self) -> None:
        items = "\n".join(
            f'<figure><img src="{name}" width="390" height="844" alt=""><figcaption>{n}. {html.escape(caption)}'
            f"</figcaption></figure>" for n, (name, caption) in enumerate(self.steps, 1))
        (WALK / "index.html").write_text(
            '<!doctype html><html lang="ja"><meta charset="utf-8"><title>butai: 血の池の夜、390×844 の一局</title>'
            "<style>body{font-family:sans-serif;background:#eee;margin:16px}main{display:flex;flex-wrap:wrap;gap:16px}"
            "figure{margin:0;width:390px}img{border:1px solid #999;background:#fff;width:390px;height:auto}"
            "figcaption{font-size:14px;padding:4px 2px}</style>"
            f"<h1>血の池の夜 — 390×844、タッチ画面</h1><main>{items}</main></html>", encoding="utf-8")


def test_a_whole_game_at_390x844_in_screenshots(browser, local_runtime):
    stage = new_scenario_stage(local_runtime, "walkthrough")
    context_ = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]}, is_mobile=True, has_touch=True)
    page = context_.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{local_runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("#cast .cast-member")
    wait_js(page, "Array.from(document.images).every(i => i.complete)")
    walk = Walk(page)

    walk.read_turn("開いたところ（幕開き）")
    walk.turn("こんばんは")
    walk.turn("流す曲を変えてみたら？")
    walk.turn("とりあえずビールください")
    page.click("#cast [data-character=神楽坂葵]")
    walk.shot("葵をタップ: 話しかける相手と、その決まり（この返事だけ）")
    page.fill("#reply-text", "葵ちゃんはどんな曲が好きなの？")
    open_keyboard(page, PHONE)
    walk.shot("キーボードを開いて入力中（画面の高さ 506）")
    page.click("#reply-submit")
    wait_js(page, "!document.getElementById('reply-submit').disabled && "
                  "document.getElementById('addressee').hidden", TURN_MS)
    walk.read_turn("葵に宛てて送った（キーボードは開いたまま、相手の選択は外れた）")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    wait_js(page, f"document.documentElement.style.getPropertyValue('--app-h') === '{PHONE[1]}px'")
    walk.turn("このお店、何年やってるの？")
    page.evaluate("() => { document.getElementById('log-region').scrollTop = 0; }")
    walk.shot("会話の記録をさかのぼって読む", scrolled_up=True)
    play(page, "前に借りたお金のこと、ちゃんと話したい")
    page.wait_for_selector("#log-jump:not([hidden])")
    walk.shot("読んでいる間に新しい発言: 「新しい発言」ボタン", scrolled_up=True)
    page.click("#log-jump")
    walk.read_turn("「新しい発言」で最新へ")
    walk.turn("うん、行こ")
    assert page.inner_text("#move-notice") == "控え室に移りました。ここにいるのは葵です。"
    walk.turn("お邪魔しました")
    page.click("#destinations button.destination")
    wait_js(page, "document.getElementById('place-name').textContent.endsWith('店内') && "
                  "!document.getElementById('reply-submit').disabled", TURN_MS)
    walk.read_turn("「店内へ行く」をタップ")
    page.fill("#reply-text", "ごちそうさま、また来るね")
    page.click("#reply-submit")
    page.wait_for_selector("#ending:not([hidden])", timeout=TURN_MS)
    walk.read_turn("「ごちそうさま、また来るね」: 終幕")
    assert_accessible(page, "walkthrough: the ending")
    page.click("#ending-leave")
    walk.shot("「ここで終わる」")
    page.reload()
    page.wait_for_selector("#ending:not([hidden])")
    wait_js(page, "Array.from(document.images).every(i => i.complete)")
    assert page.is_visible("#ending-closed") and page.is_hidden("#ending-leave")
    walk.shot("再読み込みしても、終わったまま")
    page.click("#restart")
    page.wait_for_selector("#ending", state="hidden", timeout=TURN_MS)
    walk.read_turn("「もう一度」: 新しい一局")
    walk.write_index()
    index = (WALK / "index.html").read_text(encoding="utf-8")
    assert len(walk.steps) >= 20 and all(f'src="{name}"' in index for name, _ in walk.steps)
    assert sorted(p.name for p in WALK.glob("*.png")) == [name for name, _ in walk.steps]
    assert errors == []
    context_.close()
