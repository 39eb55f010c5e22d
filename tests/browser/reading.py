"""What a phone player reads, measured the same way in every browser test.

- `read_turn(page)` taps 次へ until the bubble shows the turn's last line (as a player who reads on).
- `bubble(page)` is the bubble as it stands: which line of how many, who says it, the text.
- `open_keyboard(page, size)` shrinks the viewport the way an on-screen keyboard shrinks the visible screen.
- `what_is_covered(page)` says, in Chromium's own geometry, whether the composer lies over the bubble's line
  or the log's newest entry, and whether each lies wholly inside the screen and its own box.
"""
from tests.browser.test_stage_page import wait_js

# The share of a phone's height an on-screen keyboard takes (a typical Android or iOS keyboard with its
# suggestion bar: about 300 px of 844, 260 px of 640).
KEYBOARD_SHARE = 0.4


def bubble(page) -> dict:
    return page.evaluate("""() => { const s = document.getElementById('speech');
        return {hidden: s.hidden, step: Number(s.dataset.step || 0), steps: Number(s.dataset.steps || 0),
                speaker: document.getElementById('speaker-name').textContent,
                text: document.getElementById('speech-text').textContent}; }""")


def read_turn(page) -> list[tuple[str, str]]:
    """Taps 次へ through the turn's lines from the one shown; (speaker, text) of each line seen."""
    seen = []
    while True:
        now = bubble(page)
        seen.append((now["speaker"], now["text"]))
        if now["step"] >= now["steps"]:
            return seen
        page.click("#speech-next")
        # (the bubble may have stepped on by itself just before the tap, which then stops it: any step past
        # this one, then back to the next if the tap skipped it)
        wait_js(page, f"Number(document.getElementById('speech').dataset.step) > {now['step']}")
        while bubble(page)["step"] > now["step"] + 1:
            step = bubble(page)["step"]
            page.click("#speech-prev")
            wait_js(page, f"Number(document.getElementById('speech').dataset.step) === {step - 1}")


def keyboard_size(size: tuple[int, int]) -> tuple[int, int]:
    return size[0], round(size[1] * (1 - KEYBOARD_SHARE))


def open_keyboard(page, size: tuple[int, int]) -> None:
    """The text box focused and the visible screen shrunk by the keyboard; the page has fitted itself."""
    page.focus("#reply-text")
    width, height = keyboard_size(size)
    page.set_viewport_size({"width": width, "height": height})
    wait_js(page, f"window.visualViewport.height === {height} && "
                  f"document.documentElement.style.getPropertyValue('--app-h') === '{height}px'")
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


COVERED = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; };
  const visible = (el) => !!el && !el.closest('[hidden]') && el.getClientRects().length > 0;
  const screen = {top: 0, bottom: window.visualViewport.height, left: 0, right: window.visualViewport.width};
  const composer = document.querySelector('.reply-card');
  const ending = document.getElementById('ending');
  const bottomPart = visible(composer) ? composer : ending;
  const region = document.getElementById('log-region');
  const entries = region.querySelectorAll('#log > li');
  const newest = entries.length ? entries[entries.length - 1] : null;
  const text = document.getElementById('speech-text');
  const within = (inner, outer) => inner.top >= outer.top - 0.5 && inner.bottom <= outer.bottom + 0.5 &&
                                   inner.left >= outer.left - 0.5 && inner.right <= outer.right + 0.5;
  const overlaps = (a, b) => a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5 &&
                             a.left < b.right - 0.5 && b.left < a.right - 0.5;
  const out = {screen, bottom: box(bottomPart), problems: []};
  if (!within(out.bottom, screen)) out.problems.push('the composer is not wholly on the screen');
  if (visible(text)) {
    const line = box(text);
    out.line = line;
    if (overlaps(line, out.bottom)) out.problems.push('the composer covers the bubble');
    if (!within(line, screen)) out.problems.push('the bubble is not wholly on the screen');
    if (text.scrollHeight > text.clientHeight + 1) out.lineScrolls = true;
  }
  if (newest) {
    const n = box(newest);
    const r = box(region);
    out.newest = n; out.region = r;
    if (overlaps(n, out.bottom)) out.problems.push('the composer covers the newest entry');
    if (!within(n, r)) out.problems.push('the newest entry is not wholly inside the log');
    if (!within(r, screen)) out.problems.push('the log is not wholly on the screen');
  }
  return out;
}"""


def what_is_covered(page) -> dict:
    return page.evaluate(COVERED)


def assert_nothing_covered(page, when: str, line_may_scroll: bool = False, scrolled_up: bool = False) -> dict:
    """`scrolled_up`: the player reads older entries; the newest waits below (the 新しい発言 button)."""
    seen = what_is_covered(page)
    problems = [p for p in seen["problems"] if not (scrolled_up and p == "the newest entry is not wholly inside the log")]
    assert not problems, f"{when}: {problems}: {seen}"
    if not line_may_scroll:
        assert not seen.get("lineScrolls"), f"{when}: the bubble's line does not fit its bubble: {seen}"
    return seen


def settle_frames(page) -> None:
    """Two animation frames: the page's fitting (run in a frame) has laid the screen out."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def play(page, text: str, timeout_ms: int = 15000) -> None:
    """Types and sends a reply as a player does, and waits for the turn's answer to be on the page."""
    before = page.eval_on_selector_all("#log li", "els => els.length")
    page.fill("#reply-text", text)
    page.click("#reply-submit")
    wait_js(page, f"document.querySelectorAll('#log li').length > {before} && "
                  "!document.getElementById('reply-submit').disabled", timeout_ms)
    settle_frames(page)


def log_at_end(page) -> bool:
    return page.evaluate("""() => { const r = document.getElementById('log-region');
        return r.scrollHeight - r.scrollTop - r.clientHeight < 2; }""")
