"""What a phone player reads, in real Chromium on the local run: every line of a turn, in order, each with its
speaker and face; a log that follows its newest entry (and a 「新しい発言」 button for a player who scrolled up,
and after a reload); whom a reply is for and by which rule; a move told; the end remembered over a reload; the
scenario's title; hints for the device; emoji drawn; each new line heard once.

Screenshots land in test-output/browser/phone/reading/.
"""
import pytest

from tests.browser.accessibility import assert_accessible, settle
from tests.browser.reading import (
    assert_nothing_covered,
    bubble,
    log_at_end,
    play,
    read_turn,
    settle_frames,
)
from tests.browser.test_stage_page import SHOTS, speak, wait_js
from tests.conftest import ROOT, call
from tests.scenario_stages import new_scenario_stage

pytestmark = pytest.mark.browser
PHONE = (390, 844)
TURN_MS = 15000
STEP_MS = 12000        # a turn of three lines, stepped by time (each line at most 7 s; most far less)
READING_SHOTS = SHOTS / "phone" / "reading"

# Every line the bubble shows, as it is shown: the line, who the bubble names, who is marked as speaking
# (the card, or the portrait), and the face that card or the portrait shows at that moment.
RECORD_LINES = """
window.__lines = [];
document.addEventListener('butai:line', function (ev) {
  var card = document.querySelector('#cast .cast-member.speaking');
  var img = card ? card.querySelector('.cast-image') : document.getElementById('character-image');
  window.__lines.push({text: ev.detail.text, fresh: ev.detail.fresh,
                       speaker: document.getElementById('speaker-name').textContent,
                       card: card ? card.dataset.character : null,
                       src: img.getAttribute('src'), expression: img.dataset.expression});
});
"""

# What a screen reader is given: every node added to, or text changed in, a live region while it is live.
RECORD_HEARD = """
window.__heard = [];
document.addEventListener('DOMContentLoaded', function () { new MutationObserver(function (records) {
  records.forEach(function (r) {
    var target = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    if (!target) return;
    var live = target.closest('[aria-live], [role=status], [role=alert], [role=log]');
    if (!live || live.closest('[hidden]')) return;
    var politeness = live.getAttribute('aria-live') || (live.getAttribute('role') === 'alert' ? 'assertive' : 'polite');
    if (politeness === 'off') return;
    if (r.type === 'characterData') { window.__heard.push(r.target.textContent); return; }
    r.addedNodes.forEach(function (n) { if (n.textContent.trim()) window.__heard.push(n.textContent); });
  });
}).observe(document, {childList: true, subtree: true, characterData: true}); });
"""


def open_scenario(browser, runtime, name, size=PHONE, init=(), **context_options):
    stage = new_scenario_stage(runtime, name)
    options = {"is_mobile": True, "has_touch": True, **context_options}
    context_ = browser.new_context(viewport={"width": size[0], "height": size[1]}, **options)
    for script in init:
        context_.add_init_script(script)
    page = context_.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(f"{runtime.info['api_url']}/#stage={stage['stage_id']}&key={stage['player_key']}")
    page.wait_for_selector("body[data-state=ready]")
    page.wait_for_selector("#cast .cast-member")
    return page, stage


def shoot(page, name):
    READING_SHOTS.mkdir(parents=True, exist_ok=True)
    settle(page)
    page.screenshot(path=str(READING_SHOTS / f"{name}.png"))


def view(runtime, stage):
    status, _, body = call(runtime.info["api_url"], "GET", f"/stages/{stage['stage_id']}", stage["player_key"])
    assert status == 200, body
    return body


def lines_seen(page):
    return page.evaluate("() => window.__lines")


def turn_in_log(body, player_text):
    """The character lines the stage logged after the player's `player_text` (or from the start)."""
    log = body["log"]
    start = 0
    if player_text is not None:
        start = max(i for i, e in enumerate(log) if e["role"] == "player" and e["text"] == player_text) + 1
    lines = []
    for entry in log[start:]:
        if entry["role"] != "character":
            break
        lines.append(entry)
    return lines


def test_every_line_of_a_turn_is_seen_in_order_with_its_speaker_and_face(browser, local_runtime):
    page, stage = open_scenario(browser, local_runtime, "reading-lines", init=[RECORD_LINES])
    # The opening: two characters speak; the bubble steps from the first line to the last by itself.
    opening = turn_in_log(view(local_runtime, stage), None)
    assert [e["speaker"] for e in opening] == ["ママ", "葵"]
    wait_js(page, f"window.__lines.length >= {len(opening)}", STEP_MS)
    seen = lines_seen(page)[:len(opening)]
    assert [(s["speaker"], s["text"], s["card"]) for s in seen] == [
        (e["speaker"], e["text"], e["character"]) for e in opening]
    # each line on the speaker's card, with the face it was said with
    assert seen[0]["src"].endswith(opening[0]["image_url"]) and seen[0]["expression"] == opening[0]["expression"]
    assert bubble(page)["step"] == bubble(page)["steps"] == 2
    shoot(page, "opening-read")

    # A turn of three lines, read by tapping the bubble: each comes up at once, in order.
    page.evaluate("() => { window.__lines = []; }")
    play(page, "こんばんは")
    turn = turn_in_log(view(local_runtime, stage), "こんばんは")
    assert len(turn) == 3
    assert bubble(page)["step"] == 1 and page.is_visible("#speech-next")
    shoot(page, "turn-first-line")
    for n in range(2, len(turn) + 1):
        page.click("#speech-text")                     # a tap on the bubble: the next line
        wait_js(page, f"document.getElementById('speech').dataset.step === '{n}'")
    seen = lines_seen(page)
    assert [(s["speaker"], s["text"], s["card"]) for s in seen] == [
        (e["speaker"], e["text"], e["character"]) for e in turn]
    assert all(s["fresh"] for s in seen)               # new lines: the voice may read each once
    assert page.is_disabled("#speech-next")
    # 前へ goes back through the turn without losing the way forward
    page.click("#speech-prev")
    assert bubble(page)["text"] == turn[-2]["text"]
    page.click("#speech-next")
    assert bubble(page)["text"] == turn[-1]["text"]
    assert_accessible(page, "a turn read to its end, 390x844")
    assert page.errors == []
    page.context.close()


def test_an_agents_lines_each_show_with_their_own_face(browser, local_runtime):
    from chalicelib import context
    from chalicelib.config import Settings
    services = context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"]))
    api = local_runtime.info["api_url"]
    created = services.stage.create_stage("reading-agent")
    speak(api, created, "こんばんは。", "smile")
    context_ = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]}, is_mobile=True, has_touch=True)
    context_.add_init_script(RECORD_LINES)
    page = context_.new_page()
    page.goto(f"{api}/#stage={created.stage_id}&key={created.player_key}")
    page.wait_for_selector("body[data-state=ready]")
    wait_js(page, "document.body.dataset.push === 'live'", TURN_MS)
    page.fill("#reply-text", "ただいま")
    page.click("#reply-submit")
    page.wait_for_selector("#reply-note:not([hidden])")
    said = [("おかえりなさい！", "smile"), ("えっ、そのけが、どうしたんですか？", "surprised"),
            ("……無理しないでくださいね。", "troubled")]
    for text, expression in said:                      # faster than anyone reads: they wait their turn
        speak(api, created, text, expression)
    wait_js(page, "window.__lines.filter(l => l.fresh).length >= 3", STEP_MS + TURN_MS)
    fresh = [line for line in lines_seen(page) if line["fresh"]]
    assert [(line["text"], line["expression"]) for line in fresh] == said
    assert [line["src"].rsplit("/", 1)[-1] for line in fresh] == [f"{e}.svg" for _, e in said]
    assert page.get_attribute("#character-image", "alt") == "ひより（困り顔）"
    page.context.close()


def test_the_log_follows_its_newest_entry_unless_scrolled_up_and_after_a_reload(browser, local_runtime):
    page, stage = open_scenario(browser, local_runtime, "reading-follow")
    assert log_at_end(page)
    for text in ("こんばんは", "流す曲を変えてみたら？"):
        play(page, text)
        assert log_at_end(page), f"after {text!r} the log stopped short of its newest entry"
        assert page.is_hidden("#log-jump")

    # Scrolled back to read: new entries wait below, and a button says how many.
    page.evaluate("() => { document.getElementById('log-region').scrollTop = 0; }")
    wait_js(page, "document.getElementById('log-region').dataset.following === 'false'")
    before = page.eval_on_selector_all("#log li", "els => els.length")
    play(page, "ママ、きれいですね")
    added = page.eval_on_selector_all("#log li", "els => els.length") - before
    assert page.evaluate("document.getElementById('log-region').scrollTop") == 0     # not pulled down
    page.wait_for_selector("#log-jump:not([hidden])")
    assert page.inner_text("#log-jump") == f"新しい発言 {added}件"
    assert_nothing_covered(page, "with the 新しい発言 button", scrolled_up=True)
    assert_accessible(page, "log scrolled up, 新しい発言 offered")
    shoot(page, "log-scrolled-up")
    page.click("#log-jump")
    assert log_at_end(page) and page.is_hidden("#log-jump")
    newest = page.evaluate("Array.from(document.querySelectorAll('#log li .entry-text')).pop().textContent")

    # After a reload the log opens at its newest entry, and stays there once the faces have loaded.
    page.reload()
    page.wait_for_selector("body[data-state=ready]")
    wait_js(page, "Array.from(document.images).every(i => i.complete)")
    settle_frames(page)
    assert log_at_end(page)
    assert page.evaluate("Array.from(document.querySelectorAll('#log li .entry-text')).pop().textContent") == newest
    assert_nothing_covered(page, "after a reload")
    # the bubble shows the turn as it ended, its earlier lines a tap back
    assert bubble(page)["step"] == bubble(page)["steps"]
    shoot(page, "after-reload")
    assert page.errors == []
    page.context.close()


def test_addressing_is_shown_kept_on_a_second_tap_and_cleared_after_the_reply(browser, local_runtime):
    page, stage = open_scenario(browser, local_runtime, "reading-address")
    sent = []
    page.on("request", lambda r: sent.append(r.post_data_json) if r.url.endswith("/reply") else None)

    def pressed():
        return page.eval_on_selector_all("#cast .cast-member", "els => els.filter(e => "
                                         "e.getAttribute('aria-pressed') === 'true').map(e => e.dataset.character)")

    page.click("#cast [data-character=神楽坂葵]")
    assert pressed() == ["神楽坂葵"]
    assert page.inner_text("#addressee-name") == "葵"
    rule = page.inner_text("#addressee-rule")
    assert rule == "この返事だけ。送ると選択は外れます"
    assert_nothing_covered(page, "with the addressee chosen")
    assert_accessible(page, "addressee chosen, 390x844")
    shoot(page, "addressee-chosen")

    page.click("#cast [data-character=神楽坂葵]")     # a second tap keeps the choice, and says so
    assert pressed() == ["神楽坂葵"] and page.is_visible("#addressee")
    assert "is-nudged" in page.get_attribute("#addressee", "class")
    page.click("#cast [data-character=赤尾妙子]")     # another card: the choice moves
    assert pressed() == ["赤尾妙子"] and page.inner_text("#addressee-name") == "ママ"
    page.click("#addressee-clear")                   # undone only by its own button
    assert pressed() == [] and page.is_hidden("#addressee")

    page.click("#cast [data-character=神楽坂葵]")
    play(page, "こんばんは")
    assert sent[-1] == {"text": "こんばんは", "to": "神楽坂葵"}
    assert pressed() == [] and page.is_hidden("#addressee")    # the rule the banner showed
    play(page, "素敵なお店ですね")
    assert "to" not in sent[-1]
    assert page.errors == []
    page.context.close()


def test_a_move_is_told_and_the_end_survives_a_reload(browser, local_runtime):
    page, stage = open_scenario(browser, local_runtime, "reading-move")
    title = __import__("json").loads((ROOT / "scenarios" / "chinoike.json").read_text(encoding="utf-8"))["title"]
    assert page.inner_text("#stage-title") == title == "血の池の夜"
    assert page.title() == f"{title} — 舞台"

    play(page, "こんばんは")
    play(page, "前に借りたお金のこと、ちゃんと話したい")
    assert page.is_hidden("#move-notice")
    play(page, "うん、行こ")
    assert page.inner_text("#move-notice") == "控え室に移りました。ここにいるのは葵です。"
    assert page.get_attribute("#move-notice", "role") == "status"
    assert_nothing_covered(page, "in 控え室")
    shoot(page, "moved-to-the-back-room")
    play(page, "店に戻ろっか")
    assert page.inner_text("#move-notice") == "店内に移りました。ここにいるのはママと葵です。"
    play(page, "ごちそうさま、また来るね")
    page.wait_for_selector("#ending:not([hidden])")
    assert page.is_hidden("#move-notice")
    assert page.is_visible("#restart") and page.is_visible("#ending-leave")

    # The stage knows the game ended: a reload shows the card, with both ways on.
    page.reload()
    page.wait_for_selector("#ending:not([hidden])")
    assert page.is_visible("#restart") and page.is_visible("#ending-leave") and page.is_hidden("#reply-form")
    page.click("#ending-leave")
    assert page.is_visible("#ending-closed") and page.is_hidden("#ending-leave")
    # 「ここで終わる」 is the player's own: it holds over a reload
    page.reload()
    page.wait_for_selector("#ending:not([hidden])")
    assert page.is_visible("#ending-closed") and page.is_hidden("#ending-leave") and page.is_visible("#restart")
    assert_nothing_covered(page, "the ended page after a reload")
    assert_accessible(page, "ended and left, after a reload")
    shoot(page, "ended-after-reload")

    # A new game, ended again: its ending is another, and both ways are offered again.
    page.click("#restart")
    page.wait_for_selector("#ending", state="hidden", timeout=TURN_MS)
    assert page.is_visible("#reply-form")
    play(page, "ごちそうさま、また来るね")
    page.wait_for_selector("#ending:not([hidden])")
    assert page.is_visible("#ending-leave") and page.is_hidden("#ending-closed")
    assert page.errors == []
    page.context.close()


def test_the_keyboard_hint_is_offered_only_where_there_is_a_keyboard(browser, local_runtime):
    page, _ = open_scenario(browser, local_runtime, "reading-hint", is_mobile=False, has_touch=False)
    assert page.is_visible(".reply-shortcut")        # a desktop: the shortcut is said
    page.context.close()
    page, _ = open_scenario(browser, local_runtime, "reading-hint-touch", is_mobile=False, has_touch=True)
    page.tap("#reply-text")                          # a screen that is touched is a touch screen
    assert "is-touched" in page.get_attribute("body", "class")
    assert not page.is_visible(".reply-shortcut")
    page.context.close()


def test_emoji_in_a_line_are_drawn_in_colour(browser, local_runtime):
    """The page's font stack names the colour emoji fonts, and this machine has one (.ci/run installs
    Debian's): 💪 and 🤝 in a line are drawn in colour, not as empty boxes."""
    from chalicelib import context
    from chalicelib.config import Settings
    services = context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"]))
    api = local_runtime.info["api_url"]
    created = services.stage.create_stage("emoji")
    speak(api, created, "今日もがんばろう💪 よろしくね🤝", "smile")
    page = browser.new_page(viewport={"width": PHONE[0], "height": PHONE[1]})
    page.goto(f"{api}/#stage={created.stage_id}&key={created.player_key}")
    page.wait_for_selector("#log li .entry-text")
    stack = page.evaluate("getComputedStyle(document.querySelector('#log .entry-text')).fontFamily")
    assert "Noto Color Emoji" in stack and "Apple Color Emoji" in stack and "Segoe UI Emoji" in stack
    coloured = page.evaluate("""() => ['💪', '🤝', 'あ'].map((glyph) => {
        const font = getComputedStyle(document.querySelector('#log .entry-text')).font;
        const canvas = document.createElement('canvas');
        canvas.width = 64; canvas.height = 64;
        const ctx = canvas.getContext('2d');
        ctx.font = font.replace(/\\d+(\\.\\d+)?px/, '40px');
        ctx.fillStyle = '#000';
        ctx.fillText(glyph, 4, 48);
        const px = ctx.getImageData(0, 0, 64, 64).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4) {
          if (px[i + 3] > 128 && Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) > 60) n++;
        }
        return n;
    })""")
    assert coloured[0] > 50 and coloured[1] > 50, f"the emoji are not drawn in colour: {coloured} (no emoji font?)"
    assert coloured[2] == 0                            # the check is not vacuous: a kana is drawn in black
    READING_SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#log li").first.screenshot(path=str(READING_SHOTS / "emoji-line.png"))
    page.close()


def test_a_screen_reader_hears_each_new_line_once(browser, local_runtime):
    page, stage = open_scenario(browser, local_runtime, "reading-heard", init=[RECORD_HEARD, RECORD_LINES])
    wait_js(page, "document.getElementById('log-region').getAttribute('aria-live') === 'polite'")
    opened = page.evaluate("() => window.__heard.length")
    assert opened == 0                                 # the history on opening is not read out
    # the bubble, its counter and its buttons are in no live region: the log alone reads the lines
    assert page.evaluate("""() => ['speech-text', 'speaker-name', 'speech-step', 'log-jump'].every((id) =>
        !document.getElementById(id).closest('[aria-live]:not([aria-live=off]), [role=status], [role=alert]'))""")
    for text in ("こんばんは", "流す曲を変えてみたら？", "前に借りたお金のこと、ちゃんと話したい", "うん、行こ"):
        play(page, text)
        read_turn(page)                              # stepping the bubble adds nothing to hear
    page.evaluate("() => { document.getElementById('log-region').scrollTop = 0; }")   # the log scrolled up …
    play(page, "店に戻ろっか")
    page.click("#log-jump")                          # … and brought down: nothing is heard again
    heard = page.evaluate("() => window.__heard")
    body = view(local_runtime, stage)
    start = next(i for i, e in enumerate(body["log"]) if e["role"] == "player")
    for entry in body["log"][start:]:
        told = [h for h in heard if entry["text"] in h and h.startswith(entry.get("speaker") or "")]
        assert len(told) == 1, (entry, told)
    # each entry is read as 「speaker text」; the moves as the place and who is there
    assert sum("控え室に移りました" in h for h in heard) == 1
    assert page.evaluate("() => window.__lines.length") > len([e for e in body["log"] if e["role"] == "character"]) / 2
    assert page.errors == []
    page.context.close()
