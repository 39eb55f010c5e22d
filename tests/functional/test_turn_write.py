"""A scenario turn that brings its reply: one write, the same rules in both stores (DynamoDB over moto, memory)."""
import pytest

from chalicelib import ids
from chalicelib.stage.keys import hash_key
from chalicelib.stage.models import ReplyRequest
from chalicelib.stage.service import StageService
from chalicelib.stage.store import GuardFailed, LogRecord, Pending, ReplyRecord, StageUpdate, StaleGame, TurnWrite
from chalicelib.turn_record import TurnRecord


@pytest.fixture(params=["memory", "dynamodb"])
def stages(request, catalog, memory_store):
    if request.param == "memory":
        return StageService(memory_store, catalog)
    return request.getfixturevalue("services").stage


@pytest.fixture
def made(stages):
    return stages.create_stage("turns", kind="scenario", scenario="scenarios/x.json", title="x")


def _turn(stages, made, text="やあ", *, guard_key=None, version=None, game_version=0):
    record = stages.store.get_stage(made.stage_id)
    reply_id = ids.new_id()
    created = ids.iso_from_ms(ids.id_time_ms(reply_id))
    line_id = ids.new_id()
    line = LogRecord(id=line_id, role="character", text=f"「{text}」への返事", created_at=created,
                     speaker="ひより", character="hiyori", expression="smile")
    return TurnWrite(
        expected_game_version=game_version, stage=StageUpdate(game_version=game_version + 1, version=line_id),
        entries=[line], claim=reply_id, claim_id=f"turn-{reply_id}", turn=TurnRecord(id=reply_id, text=text),
        reply=ReplyRecord(id=reply_id, text=text, created_at=created),
        reply_entry=LogRecord(id=reply_id, role="player", text=text, created_at=created),
        guard=stages._guard(guard_key or made.player_key, "player_key_hash"),
        expected_version=record.version if version is None else version)


def _snapshot(stages, made):
    store = stages.store
    return (store.get_stage(made.stage_id), store.recent_log(made.stage_id, 50),
            store.unread_replies(made.stage_id), store.recent_turns(made.stage_id, None))


def test_the_reply_is_written_with_its_turn_already_claimed(stages, made):
    write = _turn(stages, made)
    stages.store.apply_turn(made.stage_id, write)
    log = stages.store.recent_log(made.stage_id, 50)
    assert [(e.role, e.text) for e in log] == [("player", "やあ"), ("character", "「やあ」への返事")]
    assert stages.store.unread_replies(made.stage_id) == []
    assert stages.fetch_replies(made.stage_id, made.agent_key) == []          # fetch-once: the turn has it
    # Answered by the turn, so also acknowledged: not waiting for anyone, not held by any lease.
    assert stages.store.pending_replies(made.stage_id) == Pending([], [])
    record = stages.store.get_stage(made.stage_id)
    assert record.game_version == 1 and record.version == write.entries[-1].id
    assert stages.store.recent_turns(made.stage_id, None) == [write.turn]      # typed, as written


def test_the_same_turn_written_twice_is_applied_once(stages, made):
    write = _turn(stages, made)
    stages.store.apply_turn(made.stage_id, write)
    stages.store.apply_turn(made.stage_id, write)     # a retry whose first answer was lost
    assert [e.text for e in stages.store.recent_log(made.stage_id, 50)] == ["やあ", "「やあ」への返事"]
    assert stages.store.get_stage(made.stage_id).game_version == 1


@pytest.mark.parametrize("change", ["key", "log version", "game version"])
def test_a_turn_whose_read_went_stale_writes_nothing(stages, made, change):
    if change == "key":
        stages.rotate_keys(made.stage_id, "player")
        write, error = _turn(stages, made), GuardFailed
    elif change == "log version":
        write, error = _turn(stages, made, version=ids.new_id()), StaleGame
    else:
        write, error = _turn(stages, made, game_version=3), StaleGame
    before = _snapshot(stages, made)
    with pytest.raises(error):
        stages.store.apply_turn(made.stage_id, write)
    assert _snapshot(stages, made) == before


def test_a_reply_stored_alone_is_announced_on_the_stage(stages, made):
    record = stages.store.get_stage(made.stage_id)
    assert record.unread_hint == record.unread_seen == ""
    accepted = stages.reply(made.stage_id, made.player_key, ReplyRequest(text="待ってる"))
    record = stages.store.get_stage(made.stage_id)
    assert record.unread_hint == accepted.id and record.unread_seen == ""


def test_the_player_guard_is_the_player_key(stages, made):
    write = _turn(stages, made, guard_key=made.agent_key)
    assert write.guard.value == hash_key(made.agent_key)
    with pytest.raises(GuardFailed):
        stages.store.apply_turn(made.stage_id, write)
