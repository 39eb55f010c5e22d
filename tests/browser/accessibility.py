"""axe-core and the phone layout, checked the same way in every browser test.

`assert_accessible(page, "state")` runs axe-core's default rule set on the page as it is now
and fails with axe's own report, so any test can check any state of the page (a new card, a
new button) with one call. axe-core comes pinned in requirements-dev.txt (axe-playwright-python
bundles axe.min.js); it is evaluated through the browser's debugging protocol, so the page's
Content-Security-Policy stays as strict as in production.
"""
import json

from axe_playwright_python.sync_playwright import Axe

from tests.conftest import OUTPUT

AXE_OUTPUT = OUTPUT / "browser" / "axe"
_axe = Axe()


def settle(page) -> None:
    """Wait for the page's finite animations to end (a new line fades in over 0.35 s).

    axe-core measures colours as rendered, so a line caught mid-fade reads as low contrast; what
    the player reads is the settled page. Endless animations (the 送信 button's thinking pulse)
    are left running: waiting for them would never end.
    """
    page.evaluate("""() => Promise.all(document.getAnimations()
        .filter((a) => a.effect && a.effect.getComputedTiming().iterations !== Infinity)
        .map((a) => a.finished.catch(() => null)))""")


def assert_accessible(page, state: str) -> None:
    """No axe-core violation in the page's current state; the report is kept under test-output."""
    settle(page)
    results = _axe.run(page, options={"resultTypes": ["violations"]})
    violations = results.response["violations"]
    if violations:
        AXE_OUTPUT.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() else "-" for c in state)
        (AXE_OUTPUT / f"{name}.json").write_text(json.dumps(violations, ensure_ascii=False, indent=1))
    assert not violations, f"axe-core, state {state!r}:\n{results.generate_report()}"


def composer_in_view(page) -> dict:
    """Where the reply box and its button are, relative to the viewport, without scrolling."""
    return page.evaluate("""() => {
        const box = (id) => { const r = document.getElementById(id).getBoundingClientRect();
                              return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
        return {height: window.innerHeight, width: window.innerWidth,
                text: box('reply-text'), submit: box('reply-submit')};
    }""")


def assert_composer_visible(page, when: str) -> None:
    """The text box and 送信 lie wholly inside the viewport as the page stands."""
    seen = composer_in_view(page)
    for part in ("text", "submit"):
        r = seen[part]
        assert 0 <= r["top"] and r["bottom"] <= seen["height"] and 0 <= r["left"] and r["right"] <= seen["width"], \
            f"{when}: the composer's {part} is outside the {seen['width']}x{seen['height']} viewport: {r}"
