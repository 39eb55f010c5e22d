"""Leases and acknowledgements: the same rules in both stores (DynamoDB over moto, memory), on a clock the
test moves.  A fetch hands each reply to one caller for a lease; an acknowledged reply is never handed out
again; one whose lease ends unacknowledged comes back with its delivery count one higher."""
import threading

import pytest

from chalicelib import aws, ids
from chalicelib.errors import Forbidden, Unauthorized
from chalicelib.stage.dynamo import DynamoStageStore
from chalicelib.stage.models import LEASE_DEFAULT_S, ReplyRequest
from chalicelib.stage.service import StageService
from chalicelib.stage.store import AlreadyClaimed, LogRecord, StageUpdate, TurnWrite
from chalicelib.turn_record import TurnRecord
from tests.memory_store import MemoryStageStore


class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture(params=["memory", "dynamodb"])
def stages(request, catalog, clock):
    if request.param == "memory":
        return StageService(MemoryStageStore(clock=clock), catalog, clock=clock)
    settings = request.getfixturevalue("aws_settings")
    store = DynamoStageStore(aws.client("dynamodb", settings), settings, clock=clock)
    return StageService(store, catalog, clock=clock)


@pytest.fixture
def made(stages):
    return stages.create_stage("leases")


def _reply(stages, made, text):
    return stages.reply(made.stage_id, made.player_key, ReplyRequest(text=text)).id


def _fetch(stages, made, **kwargs):
    return stages.fetch_replies(made.stage_id, made.agent_key, **kwargs)


def test_a_reply_not_acknowledged_comes_back_when_its_lease_ends_with_the_same_id(stages, made, clock):
    rid = _reply(stages, made, "一")
    [first] = _fetch(stages, made)
    assert (first.id, first.deliveries) == (rid, 1)
    assert first.lease_expires_at == ids.iso_from_ms(int((clock.now + LEASE_DEFAULT_S) * 1000))
    clock.advance(LEASE_DEFAULT_S - 1)
    assert _fetch(stages, made) == []                      # still held by the first fetch
    clock.advance(1)
    [again] = _fetch(stages, made)
    assert (again.id, again.text, again.created_at, again.deliveries) == (rid, "一", first.created_at, 2)
    clock.advance(LEASE_DEFAULT_S)
    assert [r.deliveries for r in _fetch(stages, made)] == [3]


def test_an_acknowledged_reply_is_never_handed_out_again(stages, made, clock):
    rid = _reply(stages, made, "一")
    [got] = _fetch(stages, made)
    result = stages.ack_replies(made.stage_id, made.agent_key, [got.id])
    assert (result.acked, result.unknown) == ([rid], [])
    clock.advance(10 * LEASE_DEFAULT_S)
    assert _fetch(stages, made) == []
    # Acknowledging again is harmless and still says acknowledged.
    assert stages.ack_replies(made.stage_id, made.agent_key, [rid]).acked == [rid]


def test_the_next_fetch_carries_the_acknowledgement(stages, made, clock):
    first = _reply(stages, made, "一")
    [got] = _fetch(stages, made)
    second = _reply(stages, made, "二")
    # One request: acknowledge what was handled, receive what is new.
    assert [r.id for r in _fetch(stages, made, ack=[got.id])] == [second]
    clock.advance(LEASE_DEFAULT_S)
    assert [r.id for r in _fetch(stages, made)] == [second]      # only the unacknowledged one returns
    assert first != second


def test_ids_of_no_reply_or_of_a_reply_nobody_fetched_are_unknown_and_change_nothing(stages, made, clock):
    waiting = _reply(stages, made, "まだ誰も読んでいない")
    stranger = ids.new_id()
    result = stages.ack_replies(made.stage_id, made.agent_key, [waiting, stranger])
    assert (result.acked, result.unknown) == ([], [waiting, stranger])
    assert [r.id for r in _fetch(stages, made)] == [waiting]      # still delivered, once


def test_a_lease_of_the_callers_choosing(stages, made, clock):
    _reply(stages, made, "一")
    [got] = _fetch(stages, made, lease=5)
    assert got.lease_expires_at == ids.iso_from_ms(int((clock.now + 5) * 1000))
    clock.advance(5)
    assert [r.deliveries for r in _fetch(stages, made, lease=600)] == [2]
    clock.advance(599)
    assert _fetch(stages, made) == []


def test_a_retried_request_id_gets_back_what_it_still_holds_and_renews_the_lease(stages, made, clock):
    one, two = _reply(stages, made, "一"), _reply(stages, made, "二")
    assert [r.id for r in _fetch(stages, made, request_id="r-1")] == [one, two]
    three = _reply(stages, made, "三")
    clock.advance(LEASE_DEFAULT_S - 1)
    # The answer was lost: the retry gets the same replies (nothing new), held for a fresh lease.
    again = _fetch(stages, made, request_id="r-1")
    assert [(r.id, r.deliveries) for r in again] == [(one, 1), (two, 1)]
    assert again[0].lease_expires_at == ids.iso_from_ms(int((clock.now + LEASE_DEFAULT_S) * 1000))
    clock.advance(LEASE_DEFAULT_S - 1)
    assert [r.id for r in _fetch(stages, made)] == [three]        # one and two are still held
    # Once acknowledged, a retry of the same id holds nothing any more and claims what is new.
    stages.ack_replies(made.stage_id, made.agent_key, [one, two, three])
    four = _reply(stages, made, "四")
    assert [r.id for r in _fetch(stages, made, request_id="r-1")] == [four]


def test_a_retry_that_acknowledges_its_own_batch_answers_the_rest_and_moves_on(stages, made, clock):
    """A retried fetch (same request_id) that acknowledges replies applies the acknowledgements, answers
    its batch less what it acknowledged, and a later fetch gets the new replies."""
    one, two = _reply(stages, made, "一"), _reply(stages, made, "二")
    assert [r.id for r in _fetch(stages, made, request_id="r-1")] == [one, two]
    three = _reply(stages, made, "三")
    # The retry acknowledges one of the two: the other comes back (renewed), nothing new is claimed.
    again = _fetch(stages, made, request_id="r-1", ack=[one])
    assert [r.id for r in again] == [two]
    assert again[0].lease_expires_at == ids.iso_from_ms(int((clock.now + LEASE_DEFAULT_S) * 1000))
    # Acknowledging the rest: the retry holds nothing more, so it claims what is new, at once.
    assert [r.id for r in _fetch(stages, made, request_id="r-1", ack=[two])] == [three]
    clock.advance(10 * LEASE_DEFAULT_S)
    # one and two were acknowledged for good; three is still only leased, so it comes back.
    assert [(r.id, r.deliveries) for r in _fetch(stages, made)] == [(three, 2)]


def test_a_loop_that_reuses_one_request_id_reaches_every_new_reply(stages, made, clock):
    """An agent that sends the same request_id on every call and acknowledges each batch with the next
    call: each round acknowledges the last batch and gets the next reply (before: the same batch again,
    lease renewed, the acknowledgements ignored, forever)."""
    batch: list[str] = []
    seen: list[str] = []
    for round_ in range(4):
        rid = _reply(stages, made, f"返事 {round_}")
        batch = [r.id for r in _fetch(stages, made, request_id="always-the-same", ack=batch)]
        assert batch == [rid]
        seen += batch
    _fetch(stages, made, request_id="always-the-same", ack=batch)
    clock.advance(10 * LEASE_DEFAULT_S)
    assert _fetch(stages, made) == []                   # every one acknowledged, none comes back
    assert len(set(seen)) == 4


def test_a_retry_acknowledging_its_batch_waits_for_the_next_reply(stages, made, clock):
    """With `wait`, a retry that acknowledged all it held long-polls like a new fetch (here: the wait ends
    empty, and nothing acknowledged comes back)."""
    rid = _reply(stages, made, "一")
    assert [r.id for r in _fetch(stages, made, request_id="w")] == [rid]
    assert _fetch(stages, made, request_id="w", ack=[rid], wait=0.2) == []
    clock.advance(10 * LEASE_DEFAULT_S)
    assert _fetch(stages, made) == []


def test_a_request_id_does_not_get_back_what_another_fetch_claimed_after_its_lease(stages, made, clock):
    rid = _reply(stages, made, "一")
    _fetch(stages, made, request_id="old")
    clock.advance(LEASE_DEFAULT_S)
    assert [r.id for r in _fetch(stages, made, request_id="new")] == [rid]
    assert _fetch(stages, made, request_id="old") == []


def test_acknowledging_needs_the_agent_key(stages, made):
    rid = _reply(stages, made, "一")
    _fetch(stages, made)
    with pytest.raises(Forbidden):
        stages.ack_replies(made.stage_id, made.player_key, [rid])
    with pytest.raises(Unauthorized):
        stages.ack_replies(made.stage_id, "bka_wrong", [rid])
    with pytest.raises(Unauthorized):
        stages.fetch_replies(made.stage_id, "bka_wrong", ack=[rid])
    other = stages.create_stage("other")
    with pytest.raises(Unauthorized):
        stages.ack_replies(made.stage_id, other.agent_key, [rid])


def test_concurrent_fetchers_never_share_a_reply_and_expired_leases_go_to_one_of_them(catalog, clock):
    # moto's in-process mock is not thread-safe: the DynamoDB store races over the local runtime's
    # serialised moto server in tests/e2e/test_local_runtime.py (16 fetchers, 500 replies).
    stages = StageService(MemoryStageStore(clock=clock), catalog, clock=clock)
    made = stages.create_stage("race")
    sent = [_reply(stages, made, str(i)) for i in range(12)]
    got: list[str] = []
    lock = threading.Lock()

    def fetch():
        replies = _fetch(stages, made)
        with lock:
            got.extend(r.id for r in replies)

    def race():
        threads = [threading.Thread(target=fetch) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    race()
    assert sorted(got) == sorted(sent)          # each once
    got.clear()
    clock.advance(LEASE_DEFAULT_S)
    race()
    assert sorted(got) == sorted(sent)          # every lease ended: each handed out again, once


def test_a_scenario_turn_does_not_answer_a_reply_an_agent_holds(stages, made, clock):
    """The director claims and answers a reply in one write; an agent's lease keeps it out."""
    scenario = stages.create_stage("scenario", kind="scenario", scenario="scenarios/x.json", title="x")
    rid = _reply(stages, scenario, "一")
    [held] = stages.fetch_replies(scenario.stage_id, scenario.agent_key)
    assert held.id == rid
    assert stages.store.unread_replies(scenario.stage_id) == []       # the director sees nothing to answer
    record = stages.store.get_stage(scenario.stage_id)
    line_id = ids.new_id()
    write = TurnWrite(expected_game_version=record.game_version,
                      stage=StageUpdate(game_version=record.game_version + 1, version=line_id),
                      entries=[LogRecord(id=line_id, role="character", text="返事", created_at="t")],
                      claim=rid, claim_id=f"turn-{rid}", turn=TurnRecord(id=rid, text="一"))
    with pytest.raises(AlreadyClaimed):
        stages.store.apply_turn(scenario.stage_id, write)
    clock.advance(LEASE_DEFAULT_S)
    assert [r.id for r in stages.store.unread_replies(scenario.stage_id)] == [rid]
    stages.store.apply_turn(scenario.stage_id, write)                 # claimed and answered (acknowledged)
    clock.advance(LEASE_DEFAULT_S)
    assert stages.fetch_replies(scenario.stage_id, scenario.agent_key) == []
