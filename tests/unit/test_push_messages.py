"""The push protocol's messages (chalicelib/push/messages.py): a view within one 32 KB frame."""
import json

from chalicelib.push import messages
from chalicelib.stage.models import CurrentLine, LogEntry, StageInfo, StageView


def view(n_entries: int, chars: int) -> StageView:
    return StageView(
        stage=StageInfo(id="s_0123456789abcdef", name="n", character="hiyori", character_name="ひより"),
        current=CurrentLine(text="今", expression="neutral", asked_expression="neutral", speaker="ひより",
                            image_url="/characters/hiyori/neutral.svg", fallback_image_url="", updated_at=""),
        log=[LogEntry(id=f"01J{i:023d}", role="character", text="あ" * chars, created_at="")
             for i in range(n_entries)],
        version=f"01J{n_entries - 1:023d}")


def test_a_view_that_fits_goes_whole():
    shown = view(50, 50)
    data = messages.view(shown)
    assert json.loads(data) == {"type": "view", "view": shown.model_dump(mode="json")}


def test_a_larger_view_keeps_its_newest_entries_and_names_the_one_before():
    shown = view(50, 500)                       # ~1.5 KB per entry: ~75 KB in all
    data = messages.view(shown)
    message = json.loads(data)
    assert len(data) <= messages.MAX_MESSAGE_BYTES
    kept = message["view"]["log"]
    ids = [e.id for e in shown.log]
    assert [e["id"] for e in kept] == ids[-len(kept):] and len(kept) >= 15
    assert message["after"] == ids[-len(kept) - 1]
    # As many as fit: one more would not.
    one_more = json.dumps({"type": "view", "view": {**message["view"], "log": [shown.log[-len(kept) - 1].model_dump(
        mode="json")] + kept}, "after": ids[-len(kept) - 2]}, ensure_ascii=False, separators=(",", ":"))
    assert len(one_more.encode()) > messages.MAX_MESSAGE_BYTES


def test_a_view_whose_newest_entry_cannot_fit_is_none_and_changed_is_sent():
    assert messages.view(view(3, 100), limit=300) is None
    assert json.loads(messages.changed("s_0123456789abcdef", "01J")) == {
        "type": "changed", "stage": "s_0123456789abcdef", "version": "01J"}
