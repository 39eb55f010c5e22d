"""StageService over the in-memory store: the protocol's rules without AWS."""
import threading

import pytest

from chalicelib.errors import Conflict, Forbidden, NotFound, Unauthorized, ValidationFailed
from chalicelib.stage.models import LOG_LIMIT, ReplyRequest, SpeakRequest
from chalicelib.stage.service import NotModified, etag


@pytest.fixture
def created(service):
    return service.create_stage("unit")


def speak(service, created, text="こんにちは", expression="smile", **kw):
    return service.speak(created.stage_id, created.agent_key, SpeakRequest(text=text, expression=expression, **kw))


def test_new_stage_shows_neutral_and_empty_line(service, created):
    view = service.get_stage(created.stage_id, created.player_key)
    assert view.current.text == ""
    assert view.current.expression == "neutral"
    assert view.current.image_url == "/characters/hiyori/neutral.svg"
    assert view.log == []
    assert view.stage.character_name == "ひより"


def test_speak_replaces_current_and_appends_one_log_entry(service, created):
    speak(service, created, "一つ目", "smile")
    speak(service, created, "二つ目", "troubled")
    view = service.get_stage(created.stage_id, created.agent_key)
    assert view.current.text == "二つ目"
    assert view.current.expression == "troubled"
    assert view.current.image_url.endswith("/troubled.svg")
    assert [e.text for e in view.log] == ["一つ目", "二つ目"]
    assert all(e.role == "character" and e.speaker == "ひより" for e in view.log)


def test_each_line_in_the_log_carries_the_face_it_was_said_with(service, created):
    """The page steps through a turn's lines, each with its own face, so the log names each line's picture."""
    speak(service, created, "一つ目", "smile")
    speak(service, created, "二つ目", "troubled")
    speak(service, created, "三つ目", "sleepy")             # no such image: the neutral face, as on the stage
    service.reply(created.stage_id, created.player_key, ReplyRequest(text="返事"))
    log = service.get_stage(created.stage_id, created.player_key).log
    assert [(e.image_url, e.fallback_image_url) for e in log] == [
        ("/characters/hiyori/smile.svg", "/characters/hiyori/neutral.svg"),
        ("/characters/hiyori/troubled.svg", "/characters/hiyori/neutral.svg"),
        ("/characters/hiyori/neutral.svg", "/characters/hiyori/neutral.svg"),
        (None, None)]                                          # the player's line has no face


def test_unknown_expression_falls_back_to_neutral_and_says_so(service, created):
    result = speak(service, created, expression="sparkly")
    assert (result.expression, result.asked_expression) == ("neutral", "sparkly")
    assert result.image_url.endswith("/neutral.svg")
    view = service.get_stage(created.stage_id, created.player_key)
    assert view.current.expression == "neutral" and view.current.asked_expression == "sparkly"


def test_malformed_expression_is_unknown_not_an_error(service, created):
    assert speak(service, created, expression="Smile!").expression == "neutral"


def test_speaker_override(service, created):
    speak(service, created, speaker="ナレーター")
    view = service.get_stage(created.stage_id, created.player_key)
    assert view.current.speaker == "ナレーター" and view.log[-1].speaker == "ナレーター"


def test_same_request_id_is_spoken_once_with_the_same_response(service, created, memory_store):
    first = speak(service, created, "一度だけ", request_id="req-1")
    again = speak(service, created, "一度だけ", request_id="req-1")
    assert again == first
    assert len(memory_store.logs[created.stage_id]) == 1


def test_reused_request_id_with_other_text_is_a_conflict(service, created, memory_store):
    speak(service, created, "一度だけ", request_id="req-1")
    with pytest.raises(Conflict) as err:
        speak(service, created, "別の台詞", request_id="req-1")
    assert err.value.field == "request_id"
    assert len(memory_store.logs[created.stage_id]) == 1


def test_reply_is_fetched_exactly_once_oldest_first(service, created):
    for text in ("一", "二", "三"):
        service.reply(created.stage_id, created.player_key, ReplyRequest(text=text))
    replies = service.fetch_replies(created.stage_id, created.agent_key)
    assert [r.text for r in replies] == ["一", "二", "三"]
    assert service.fetch_replies(created.stage_id, created.agent_key) == []


def test_reply_appears_in_log_as_player(service, created):
    service.reply(created.stage_id, created.player_key, ReplyRequest(text="やあ"))
    entry = service.get_stage(created.stage_id, created.player_key).log[-1]
    assert (entry.role, entry.text, entry.expression) == ("player", "やあ", None)


def test_log_keeps_the_last_fifty_oldest_first(service, created):
    for i in range(LOG_LIMIT + 7):
        speak(service, created, f"台詞{i}")
    log = service.get_stage(created.stage_id, created.player_key).log
    assert len(log) == LOG_LIMIT
    assert log[0].text == "台詞7" and log[-1].text == f"台詞{LOG_LIMIT + 6}"


def test_etag_unchanged_until_something_happens(service, created, memory_store):
    view = service.get_stage(created.stage_id, created.player_key)
    memory_store.calls.clear()
    same = service.get_stage(created.stage_id, created.player_key, etag(view.version))
    assert isinstance(same, NotModified)
    assert memory_store.calls == ["get_stage"]
    service.reply(created.stage_id, created.player_key, ReplyRequest(text="変化"))
    changed = service.get_stage(created.stage_id, created.player_key, etag(view.version))
    assert not isinstance(changed, NotModified) and changed.version != view.version


@pytest.mark.parametrize("call", ["speak", "fetch"])
def test_player_key_on_agent_routes_is_forbidden(service, created, memory_store, call):
    before = (dict(memory_store.stages), dict(memory_store.logs))
    with pytest.raises(Forbidden):
        if call == "speak":
            service.speak(created.stage_id, created.player_key, SpeakRequest(text="x"))
        else:
            service.fetch_replies(created.stage_id, created.player_key)
    assert (memory_store.stages, memory_store.logs) == before


def test_agent_key_cannot_reply_as_player(service, created):
    with pytest.raises(Forbidden):
        service.reply(created.stage_id, created.agent_key, ReplyRequest(text="x"))


@pytest.mark.parametrize("key", [None, "", "bka_wrong"])
def test_missing_or_wrong_key_is_unauthorized(service, created, key):
    with pytest.raises(Unauthorized):
        service.speak(created.stage_id, key, SpeakRequest(text="x"))
    with pytest.raises(Unauthorized):
        service.get_stage(created.stage_id, key)


def test_unknown_stage_is_not_found(service, created):
    with pytest.raises(NotFound):
        service.speak("s_missing", created.agent_key, SpeakRequest(text="x"))
    with pytest.raises(NotFound):
        service.fetch_replies("s_missing", created.agent_key)


def test_keys_of_one_stage_do_nothing_on_another(service, created):
    other = service.create_stage("other")
    with pytest.raises(Unauthorized):
        service.speak(other.stage_id, created.agent_key, SpeakRequest(text="x"))
    with pytest.raises(Unauthorized):
        service.get_stage(other.stage_id, created.player_key)


def test_keys_are_stored_only_as_hashes(service, created, memory_store):
    record = memory_store.stages[created.stage_id]
    dumped = repr(record)
    assert created.agent_key not in dumped and created.player_key not in dumped
    assert len(created.agent_key) >= 30  # 192 random bits in url-safe base64 plus a prefix


def test_unknown_character_cannot_make_a_stage(service):
    with pytest.raises(NotFound):
        service.create_stage("x", "nobody")
    with pytest.raises(ValidationFailed):
        service.create_stage("x", "a/b")


def test_concurrent_fetchers_share_replies_without_duplicates(service, created):
    for i in range(200):
        service.reply(created.stage_id, created.player_key, ReplyRequest(text=str(i)))
    got, lock = [], threading.Lock()

    def fetch():
        replies = service.fetch_replies(created.stage_id, created.agent_key)
        with lock:
            got.extend(r.text for r in replies)

    threads = [threading.Thread(target=fetch) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got, key=int) == [str(i) for i in range(200)]


@pytest.mark.parametrize("which", ["agent", "player", "both"])
def test_rotating_keys_locks_out_the_old_ones_at_once(service, created, which):
    new = service.rotate_keys(created.stage_id, which)
    old_agent, old_player = created.agent_key, created.player_key
    agent = new.get("agent_key", old_agent)
    player = new.get("player_key", old_player)
    if which in ("agent", "both"):
        with pytest.raises(Unauthorized):
            service.speak(created.stage_id, old_agent, SpeakRequest(text="x"))
    if which in ("player", "both"):
        with pytest.raises(Unauthorized):
            service.get_stage(created.stage_id, old_player)
    service.speak(created.stage_id, agent, SpeakRequest(text="新しい鍵で"))
    assert service.get_stage(created.stage_id, player).current.text == "新しい鍵で"
    with pytest.raises(ValidationFailed):
        service.rotate_keys(created.stage_id, "everyone")
    with pytest.raises(NotFound):
        service.rotate_keys("s_missing")


@pytest.mark.parametrize("text", ["\x00", "\u200b\u2060", " \t\n", "\u3000",
                                  # render as nothing: Hangul fillers, the Braille blank, marks with no base
                                  "\u3164", "\u3164\u3164 ", "\uffa0", "\u115f\u1160", "\u2800" * 3,
                                  "\u0301\u0302", "\u3099", "\u20dd", "\u034f\ufe0f", "\U000e0100", " \u0301\u200b"])
def test_invisible_text_is_blank(text):
    from pydantic import ValidationError
    with pytest.raises(ValidationError):
        SpeakRequest(text=text)
    with pytest.raises(ValidationError):
        ReplyRequest(text=text)
