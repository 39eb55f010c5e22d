"""The DynamoDB store against moto: atomic writes, fetch-once claims, request counts."""
import itertools
import time

import pytest

from chalicelib import aws, ids, tables
from chalicelib.stage.dynamo import DynamoStageStore
from chalicelib.stage.models import ReplyRequest, SpeakRequest
from chalicelib.stage.service import StageService


def _scan(settings, logical):
    db = aws.client("dynamodb", settings)
    return db.scan(TableName=tables.table_name(settings, logical))["Items"]


class CallCounter:
    """Counts DynamoDB API calls with botocore's event hooks."""

    def __init__(self, client):
        self.calls = []
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model, **_):
        self.calls.append(model.name)


@pytest.fixture
def counted(services):
    store = services.stage.store
    return services.stage, CallCounter(store._db)


def test_tables_match_the_one_definition(aws_settings):
    db = aws.client("dynamodb", aws_settings)
    pending = db.describe_table(TableName=aws_settings.table_pending)["Table"]
    assert pending["GlobalSecondaryIndexes"][0]["IndexName"] == tables.UNREAD_INDEX
    log = db.describe_table(TableName=aws_settings.table_log)["Table"]
    assert [k["AttributeName"] for k in log["KeySchema"]] == ["stage_id", "sk"]
    assert tables.create_tables(db, aws_settings) == []  # idempotent


def test_speak_is_one_request_once_warm(counted, stage):
    service, counter = counted
    service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="一", expression="smile"))
    counter.calls.clear()
    service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="二", expression="smile"))
    assert counter.calls == ["TransactWriteItems"]


def test_unchanged_poll_is_one_read(counted, stage):
    service, counter = counted
    view = service.get_stage(stage.stage_id, stage.player_key)
    counter.calls.clear()
    service.get_stage(stage.stage_id, stage.player_key, f'"{view.version}"')
    assert counter.calls == ["GetItem"]


def test_reply_is_one_request_and_fetch_is_a_query_and_claims(counted, stage):
    service, counter = counted
    counter.calls.clear()
    service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="やあ"))
    assert counter.calls == ["TransactWriteItems"]
    counter.calls.clear()
    assert [r.text for r in service.fetch_replies(stage.stage_id, stage.agent_key)] == ["やあ"]
    assert counter.calls == ["Query", "TransactWriteItems"]


def test_the_agent_loop_is_two_requests_per_fetch(counted, stage):
    """fetch with `ack` of the last batch: one query, one transaction (acknowledgements and claims together);
    nothing to acknowledge or claim: the query and the key check; a retried request id: the query and the
    renewal."""
    service, counter = counted
    service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="一"))
    [first] = service.fetch_replies(stage.stage_id, stage.agent_key, "loop-1")
    service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="二"))
    counter.calls.clear()
    [second] = service.fetch_replies(stage.stage_id, stage.agent_key, "loop-2", ack=[first.id])
    assert second.text == "二" and counter.calls == ["Query", "TransactWriteItems"]
    counter.calls.clear()
    assert service.fetch_replies(stage.stage_id, stage.agent_key, "loop-3", ack=[second.id]) == []
    assert counter.calls == ["Query", "TransactWriteItems"]
    counter.calls.clear()
    assert service.fetch_replies(stage.stage_id, stage.agent_key, "loop-4") == []
    assert counter.calls == ["Query", "GetItem"]
    service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="三"))
    [third] = service.fetch_replies(stage.stage_id, stage.agent_key, "loop-5")
    counter.calls.clear()
    assert [r.id for r in service.fetch_replies(stage.stage_id, stage.agent_key, "loop-5")] == [third.id]
    assert counter.calls == ["Query", "TransactWriteItems"]
    assert service.store.pending_replies(stage.stage_id).claimable == []


def test_a_claimed_reply_is_held_under_its_lease_and_leaves_the_unread_index_when_acknowledged(
        services, stage, aws_settings):
    service = services.stage
    service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="やあ"))
    [got] = service.fetch_replies(stage.stage_id, stage.agent_key)
    [item] = _scan(aws_settings, "pending_replies")
    assert tables.UNREAD_ATTR in item and item["deliveries"] == {"N": "1"} and "claim_id" in item
    lease_until = int(item["lease_until"]["N"])
    assert ids.iso_from_ms(lease_until) == got.lease_expires_at and got.deliveries == 1
    assert abs(lease_until - (time.time() * 1000 + 30_000)) < 5_000      # the default lease: 30 s
    assert service.store.unread_replies(stage.stage_id) == []      # held: nobody else may claim it
    assert service.ack_replies(stage.stage_id, stage.agent_key, [got.id]).acked == [got.id]
    [item] = _scan(aws_settings, "pending_replies")
    assert tables.UNREAD_ATTR not in item
    assert service.store.pending_replies(stage.stage_id).claimable == []


def test_fetch_claims_more_than_one_transaction_holds(services, stage):
    service = services.stage
    for i in range(130):
        service.reply(stage.stage_id, stage.player_key, ReplyRequest(text=str(i)))
    got = service.fetch_replies(stage.stage_id, stage.agent_key)
    assert [r.text for r in got] == [str(i) for i in range(130)]
    assert service.fetch_replies(stage.stage_id, stage.agent_key) == []


def test_a_reply_already_claimed_elsewhere_is_not_returned_again(services, stage):
    service = services.stage
    for text in ("一", "二"):
        service.reply(stage.stage_id, stage.player_key, ReplyRequest(text=text))
    store = service.store
    unread = store.unread_replies(stage.stage_id)
    # Another caller claims the first reply between our query and our claim.
    from chalicelib.stage.keys import hash_key
    from chalicelib.stage.store import Claim, Guard
    guard = Guard("agent_key_hash", hash_key(stage.agent_key))
    until = int(time.time() * 1000) + 30_000
    store.claim_replies(stage.stage_id, guard, unread[:1], Claim("x", until))
    claimed = store.claim_replies(stage.stage_id, guard, unread, Claim("y", until))
    assert [r.id for r in claimed] == [unread[1].id]


def _fixed_ids(stage_service, values):
    it = iter(values)
    stage_service._new_id = lambda: next(it)


def test_failure_in_second_half_of_speak_leaves_neither_half(services, stage, aws_settings, client):
    service = services.stage
    clash = ids.new_id()
    # A log entry already holds the id the next speak will use, so the second
    # half of the transaction (the log put) fails its condition.
    db = aws.client("dynamodb", aws_settings)
    db.put_item(TableName=aws_settings.table_log,
                Item={"stage_id": {"S": stage.stage_id}, "sk": {"S": tables.LOG_EVENT_PREFIX + clash},
                      "id": {"S": clash}, "role": {"S": "character"}, "text": {"S": "先客"},
                      "created_at": {"S": "x"}})
    before_current = _scan(aws_settings, "current")
    before_log = _scan(aws_settings, "log")
    _fixed_ids(service, itertools.repeat(clash))
    response = client.http.post(f"/stages/{stage.stage_id}/speak",
                                headers={"Authorization": f"Bearer {stage.agent_key}",
                                         "Content-Type": "application/json"},
                                body='{"text": "消えるはずの台詞", "expression": "smile", "request_id": "atom-1"}')
    assert response.status_code == 500
    assert response.json_body["error"]["code"] == "internal"
    assert _scan(aws_settings, "current") == before_current
    assert _scan(aws_settings, "log") == before_log


def test_failure_in_second_half_of_reply_leaves_neither_half(services, stage, aws_settings):
    service = services.stage
    clash = ids.new_id()
    db = aws.client("dynamodb", aws_settings)
    db.put_item(TableName=aws_settings.table_pending,
                Item={"stage_id": {"S": stage.stage_id}, "reply_id": {"S": clash}, "text": {"S": "先客"},
                      "created_at": {"S": "x"}})
    before = [_scan(aws_settings, t) for t in ("current", "log")]
    _fixed_ids(service, itertools.repeat(clash))
    with pytest.raises(RuntimeError):
        service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="消える返事"))
    assert [_scan(aws_settings, t) for t in ("current", "log")] == before


def test_idempotent_speak_against_dynamodb(services, stage, aws_settings):
    service = services.stage
    first = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="一度", request_id="abc"))
    second = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="一度", request_id="abc"))
    assert first == second
    events = [i for i in _scan(aws_settings, "log") if i["sk"]["S"].startswith(tables.LOG_EVENT_PREFIX)]
    assert len(events) == 1


def test_store_lists_stages(services, stage):
    names = [s.name for s in services.stage.list_stages()]
    assert names == ["test"]
    assert isinstance(services.stage.store, DynamoStageStore)
    assert isinstance(services.stage, StageService)


def _speak_write(text, entry_id):
    from chalicelib.stage.store import LogRecord, SpeakWrite, StoredLine
    return SpeakWrite(line=StoredLine(text=text, expression="smile", asked_expression="smile", speaker="ひより",
                                      image_key="characters/hiyori/smile.svg",
                                      fallback_key="characters/hiyori/neutral.svg", updated_at="t"),
                      entry=LogRecord(id=entry_id, role="character", text=text, created_at="t", speaker="ひより"))


def test_a_replayed_write_whose_first_attempt_landed_is_done_not_doubled(services, stage, aws_settings, monkeypatch):
    """What an SDK retry after a lost answer looks like: the same call arrives again."""
    from chalicelib.stage import dynamo
    from chalicelib.stage.keys import hash_key
    from chalicelib.stage.store import Guard
    store = services.stage.store
    guard = Guard("agent_key_hash", hash_key(stage.agent_key))
    monkeypatch.setattr(dynamo.secrets, "token_hex", lambda n: "same-call-token")
    write = _speak_write("一度だけ", ids.new_id())
    store.speak(stage.stage_id, guard, write)
    store.speak(stage.stage_id, guard, write)  # the replay: no error, nothing added
    events = [i for i in _scan(aws_settings, "log") if i["sk"]["S"].startswith(tables.LOG_EVENT_PREFIX)]
    assert len(events) == 1


def test_a_different_call_colliding_on_an_id_is_an_error_not_a_silent_success(services, stage, monkeypatch):
    from chalicelib.stage.keys import hash_key
    from chalicelib.stage.store import Guard
    store = services.stage.store
    guard = Guard("agent_key_hash", hash_key(stage.agent_key))
    entry_id = ids.new_id()
    store.speak(stage.stage_id, guard, _speak_write("一", entry_id))
    with pytest.raises(RuntimeError):
        store.speak(stage.stage_id, guard, _speak_write("二", entry_id))


def test_a_replayed_claim_still_returns_the_replies_it_claimed(services, stage):
    from chalicelib.stage.keys import hash_key
    from chalicelib.stage.store import Claim, Guard
    service = services.stage
    for text in ("一", "二"):
        service.reply(stage.stage_id, stage.player_key, ReplyRequest(text=text))
    store = service.store
    guard = Guard("agent_key_hash", hash_key(stage.agent_key))
    unread = store.unread_replies(stage.stage_id)
    wanted = [r.id for r in unread]
    first = Claim("claim-1", int(time.time() * 1000) + 30_000)
    assert [r.id for r in store.claim_replies(stage.stage_id, guard, unread, first)] == wanted
    # The answer was lost and the same claim arrives again: the replies are still this caller's.
    again = store.claim_replies(stage.stage_id, guard, unread, first)
    assert sorted(r.id for r in again) == sorted(wanted) and {r.deliveries for r in again} == {1}
    assert {r.claim_id for r in again} == {"claim-1"}
    assert store.claim_replies(stage.stage_id, guard, unread, Claim("claim-2", first.until_ms)) == []


def test_retention_sets_ttl_and_expired_items_are_ignored_before_dynamodb_deletes_them(aws_settings, services, stage):
    from chalicelib.stage.service import StageService
    now = [1_000_000.0]
    settings = aws_settings.with_(retention_days=2)
    store = DynamoStageStore(aws.client("dynamodb", settings), settings, clock=lambda: now[0])
    service = StageService(store, services.stage.catalog)
    service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="古い台詞"))
    service.reply(stage.stage_id, stage.player_key, ReplyRequest(text="古い返事"))
    items = _scan(aws_settings, "log") + _scan(aws_settings, "pending_replies")
    assert {int(i["expires_at"]["N"]) for i in items} == {1_000_000 + 2 * 86400}
    now[0] += 2 * 86400 + 1  # past the retention, not yet deleted by DynamoDB
    service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="新しい台詞"))
    assert [e.text for e in service.get_stage(stage.stage_id, stage.player_key).log] == ["新しい台詞"]
    assert service.fetch_replies(stage.stage_id, stage.agent_key) == []
