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


def test_a_push_carries_what_follows_the_version_before_the_change(service):
    """PushService.news over the in-memory store: the entries after the previous version when it is one
    of the newest entries; else the whole log when it is short, or the newest ten after the one before."""
    from chalicelib.push.service import NEWS_ENTRIES, PushService
    from chalicelib.stage.models import SpeakRequest
    push = PushService(service, connections=None, sender=None)
    created = service.create_stage("news")
    first = service.speak(created.stage_id, created.agent_key, SpeakRequest(text="一"))
    second = service.speak(created.stage_id, created.agent_key, SpeakRequest(text="二"))
    stage = service.store.get_stage(created.stage_id)
    shown, after = push.news(stage, first.version)
    assert after == first.id and [e.text for e in shown.log] == ["二"]
    shown, after = push.news(stage, stage.created_at)          # a version that names no entry
    assert after is None and [e.text for e in shown.log] == ["一", "二"]
    spoken = [service.speak(created.stage_id, created.agent_key, SpeakRequest(text=str(i))) for i in range(12)]
    stage = service.store.get_stage(created.stage_id)
    shown, after = push.news(stage, second.version)            # older than the newest ten read
    assert [e.id for e in shown.log] == [s.id for s in spoken[-NEWS_ENTRIES:]]
    assert after == spoken[-NEWS_ENTRIES - 1].id
    assert shown.current.text == "11" and shown.version == spoken[-1].version


def test_a_push_never_carries_entries_of_a_later_change(service):
    """The log is read after the stage (the stream's image, or the local read): a line written in between
    waits for its own push, so a page never shows a log entry beside an older current line."""
    from chalicelib.push.service import PushService
    from chalicelib.stage.models import SpeakRequest
    push = PushService(service, connections=None, sender=None)
    created = service.create_stage("skew")
    first = service.speak(created.stage_id, created.agent_key, SpeakRequest(text="先"))
    as_read = service.store.get_stage(created.stage_id)
    service.speak(created.stage_id, created.agent_key, SpeakRequest(text="後"))
    shown, after = push.news(as_read, None)
    assert [e.id for e in shown.log] == [first.id] and shown.current.text == "先" and after is None
