"""One reply must never break a stage.

- `move` and `to` are checked at the edge: a padded, tab, control or invisible value is a 400 naming the
  field, and nothing is stored;
- a reply the director cannot play for any reason (stored before the check existed, a bug in a turn, a turn
  too large to write) is answered with a notice and an error in its debug record, and the game goes on;
- the key is checked before the body;
- whatever fails underneath (storage errors of every kind injected at every call), a 5xx leaves every table
  exactly as it was, and a stage is never stuck: a clean reply afterwards is played and leaves nothing unread.
"""
from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from butai_tools.interpret.export import export_eval
from chalicelib.stage.store import LogRecord, ReplyRecord
from tests.conftest import OUTPUT
from tests.hardening._support import StageState, diff, error_of

PLACES = ["控え室", "店内"]
CHARACTERS = ["神楽坂葵", "赤尾妙子"]
BAD_IDS = [" 控え室", "控え室 ", "\t控え室", "控え室\n", "控\x00え室", "控え室\u200b", "\u202e控え室", "\ue000",
           "　", " ", "控え室\x7f", "\ufeff控え室", "\u2028"]


def _headers(key):
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


def _post(moto_app, stage_id, route, key, body):
    raw = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
    return moto_app.client.http.post(f"/stages/{stage_id}/{route}", headers=_headers(key), body=raw)


def _turns(moto_app, stage, limit=50):
    r = moto_app.client.http.get(f"/stages/{stage.stage_id}/debug?limit={limit}",
                                 headers={"Authorization": f"Bearer {stage.agent_key}"})
    assert r.status_code == 200, r.body
    return r.json_body["turns"]


# ============================================================== the edge


def test_the_issues_two_requests_400_then_a_played_turn(moto_app, scenario_stage):
    before = moto_app.state(scenario_stage.stage_id)
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key,
              {"text": "行こう", "move": " 控え室"})
    err = error_of(r)
    assert (r.status_code, err["code"], err["field"]) == (400, "invalid_request", "move")
    assert moto_app.state(scenario_stage.stage_id) == before
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code == 202, r.body
    view = r.json_body["view"]
    assert view["log"][-1]["role"] == "character" and view["scene"]["turn"] >= 1
    assert StageState.unread(moto_app.state(scenario_stage.stage_id), scenario_stage.stage_id) == set()


@pytest.mark.parametrize("field", ["move", "to"])
@pytest.mark.parametrize("value", BAD_IDS)
def test_a_bad_move_or_to_is_a_400_that_stores_nothing(moto_app, scenario_stage, agent_stage, field, value):
    for stage in (scenario_stage, agent_stage):
        before = moto_app.state(stage.stage_id)
        r = _post(moto_app, stage.stage_id, "reply", stage.player_key, {"text": "行こう", field: value})
        err = error_of(r)
        assert (r.status_code, err["field"]) == (400, field), (value, err)
        assert moto_app.state(stage.stage_id) == before


def test_ids_are_stored_in_nfc(moto_app, scenario_stage):
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key,
              {"text": "行こう", "move": "cafe\u0301"})
    assert r.status_code == 202
    turn = _turns(moto_app, scenario_stage)[-1]
    assert turn["move"] == "caf\u00e9" and turn["errors"] == ["unknown destination 'caf\u00e9'"]


# ============================================================== the director never stalls


def _store_reply(moto_app, stage, text, **fields):
    """A reply stored as an older version of butai (or a bug) might have: past the edge's checks."""
    from chalicelib import ids
    from chalicelib.stage import keys
    from chalicelib.stage.service import PLAYER
    from chalicelib.stage.store import Guard
    reply_id = ids.new_id()
    created = ids.iso_from_ms(ids.id_time_ms(reply_id))
    moto_app.services.stage.store.add_reply(
        stage.stage_id, Guard(PLAYER, keys.hash_key(stage.player_key)),
        ReplyRecord(id=reply_id, text=text, created_at=created, **fields),
        LogRecord(id=reply_id, role="player", text=text, created_at=created))
    return reply_id


@pytest.mark.parametrize("fields", [{"move": " 控え室"}, {"move": "\t"}, {"to": "\x00"}, {"move": "控え室\u200b"}])
def test_a_stored_reply_that_cannot_be_played_is_answered_with_a_notice(moto_app, scenario_stage, fields):
    poisoned = _store_reply(moto_app, scenario_stage, "行こう", **fields)
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code == 202, r.body
    state = moto_app.state(scenario_stage.stage_id)
    assert StageState.unread(state, scenario_stage.stage_id) == set()
    turns = _turns(moto_app, scenario_stage)
    by_reply = {t["id"]: t for t in turns}
    assert by_reply[r.json_body["id"]]["lines"] or by_reply[r.json_body["id"]]["free_talk"]
    # A padded move is no place: the turn is played as なし with the error noted (a move the rules refuse
    # would be answered with the notice instead; both leave the stage playable).
    assert by_reply[poisoned]["errors"], by_reply[poisoned]


def _fallback_texts(director, stage_id, character):
    loaded = director.library.get(director.stages.read_stage(stage_id).scenario)
    return {f.text for f in loaded.compiled.characters[character].fallbacks}


def test_a_turn_that_raises_is_answered_with_a_fallback_line_and_the_game_goes_on(moto_app, scenario_stage,
                                                                                  monkeypatch):
    director = moto_app.services.director
    loaded = director.library.get(director.stages.read_stage(scenario_stage.stage_id).scenario)
    game_before = director.stages.read_stage(scenario_stage.stage_id).game

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in a turn")
    monkeypatch.setattr(loaded.interpreter, "interpret_turn", broken)
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code == 202, r.body
    view = r.json_body["view"]
    # answered in the voice of the one who answers here (ママ at the counter), with one of her fallbacks
    last = view["log"][-1]
    assert last["role"] == "character" and last["character"] == "赤尾妙子"
    assert last["text"] in _fallback_texts(director, scenario_stage.stage_id, "赤尾妙子")
    assert view["current"]["text"] == last["text"]
    turn = _turns(moto_app, scenario_stage)[-1]
    assert turn["unplayable"] and turn["errors"] == ["unplayable: RuntimeError: a bug in a turn"]
    assert turn["free_talk"]["source"] == "fallback" and turn["free_talk"]["reason"] == "unplayable"
    record = director.stages.read_stage(scenario_stage.stage_id)
    assert record.game == game_before                   # nothing was played
    assert StageState.unread(moto_app.state(scenario_stage.stage_id), scenario_stage.stage_id) == set()
    monkeypatch.undo()
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code == 202 and r.json_body["view"]["log"][-1]["role"] == "character"
    # an unplayable turn is not an evaluation case
    cases = export_eval(director.stages, scenario_stage.stage_id)["cases"]
    assert [c["text"] for c in cases] == ["こんばんは"]


def test_a_turn_too_large_to_write_is_answered_with_a_fallback_line(moto_app, scenario_stage, monkeypatch):
    store = moto_app.services.director.stages.store
    real = store.apply_turn
    refused = []

    def apply_turn(stage_id, write):
        if write.turn is not None and not write.turn.unplayable:
            refused.append(write.turn.id)
            raise ClientError({"Error": {"Code": "ValidationException", "Message": "Item size has exceeded the "
                                         "maximum allowed size"}}, "TransactWriteItems")
        return real(stage_id, write)
    monkeypatch.setattr(store, "apply_turn", apply_turn)
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code == 202 and refused == [r.json_body["id"]]
    assert r.json_body["view"]["log"][-1]["text"] in _fallback_texts(moto_app.services.director,
                                                                      scenario_stage.stage_id, "赤尾妙子")
    assert "ValidationException" in _turns(moto_app, scenario_stage)[-1]["errors"][0]


def test_storage_failing_at_the_turn_write_is_a_5xx_that_writes_nothing_and_the_resend_plays(
        moto_app, scenario_stage, monkeypatch):
    # A scenario reply is written together with its turn (one transaction): when that write fails, nothing
    # is stored, the page is told so, and the same reply sent again is played.
    store = moto_app.services.director.stages.store
    real = store.apply_turn
    before = moto_app.state(scenario_stage.stage_id)
    monkeypatch.setattr(store, "apply_turn", lambda *a: (_ for _ in ()).throw(
        ClientError({"Error": {"Code": "InternalServerError", "Message": "x"}}, "TransactWriteItems")))
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code >= 500 and r.json_body["error"]["code"]
    assert moto_app.state(scenario_stage.stage_id) == before
    monkeypatch.setattr(store, "apply_turn", real)
    r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
    assert r.status_code == 202 and r.json_body["view"] is not None
    assert [t["id"] for t in _turns(moto_app, scenario_stage, 1)] == [r.json_body["id"]]
    assert StageState.unread(moto_app.state(scenario_stage.stage_id), scenario_stage.stage_id) == set()


# ============================================================== the key before the body


BAD_BODIES = [b'{"zzz": 1}', b"not json", b"[1]", b'{"text": ""}', b"x" * 20000]


@pytest.mark.parametrize("body", BAD_BODIES)
@pytest.mark.parametrize("route,role", [("speak", "agent"), ("reply", "player"), ("fetch_replies", "agent")])
def test_the_key_is_checked_before_the_body(moto_app, agent_stage, scenario_stage, route, role, body):
    if route == "fetch_replies" and body == b'{"text": ""}':
        body = b'{"request_id": ""}'
    stage = agent_stage
    right = stage.agent_key if role == "agent" else stage.player_key
    other_role = stage.player_key if role == "agent" else stage.agent_key
    cases = [("bka_wrong", 401, "wrong_key"), (scenario_stage.agent_key, 401, "wrong_key"),
             (other_role, 403, f"{role}_key_required"), (None, 401, "missing_key")]
    for key, status, code in cases:
        headers = _headers(key) if key else {"Content-Type": "application/json"}
        r = moto_app.client.http.post(f"/stages/{stage.stage_id}/{route}", headers=headers, body=body)
        assert (r.status_code, error_of(r)["code"]) == (status, code), (key, r.body)
    r = moto_app.client.http.post(f"/stages/s_0000000000000000/{route}", headers=_headers(right), body=body)
    assert (r.status_code, error_of(r)["code"]) == (404, "stage_not_found")
    r = moto_app.client.http.post(f"/stages/{stage.stage_id}/{route}", headers=_headers(right), body=body)
    assert r.status_code in (400, 413) and error_of(r)["field"] in ("body", "text", "zzz", "request_id")


def test_a_bad_debug_limit_with_a_wrong_key_is_401(moto_app, scenario_stage):
    r = moto_app.client.http.get(f"/stages/{scenario_stage.stage_id}/debug?limit=x",
                                 headers={"Authorization": "Bearer bka_wrong"})
    assert (r.status_code, error_of(r)["code"]) == (401, "wrong_key")
    r = moto_app.client.http.get(f"/stages/{scenario_stage.stage_id}/debug?limit=x",
                                 headers={"Authorization": f"Bearer {scenario_stage.agent_key}"})
    assert (r.status_code, error_of(r)["field"]) == (400, "limit")


class Calls:
    """Counts the DynamoDB requests the stage service makes."""

    def __init__(self, client):
        self.names: list[str] = []
        client.meta.events.register("before-call.dynamodb", self._seen)
        self._client = client

    def _seen(self, model, **_):
        self.names.append(model.name)

    def close(self):
        self._client.meta.events.unregister("before-call.dynamodb", self._seen)


def test_a_valid_write_is_still_one_request(moto_app, agent_stage):
    calls = Calls(moto_app.services.stage.store._db)
    try:
        assert _post(moto_app, agent_stage.stage_id, "speak", agent_stage.agent_key, {"text": "一"}).status_code == 200
        calls.names.clear()
        assert _post(moto_app, agent_stage.stage_id, "speak", agent_stage.agent_key, {"text": "二"}).status_code == 200
        assert calls.names == ["TransactWriteItems"]
        assert _post(moto_app, agent_stage.stage_id, "reply", agent_stage.player_key, {"text": "x"}).status_code == 202
        calls.names.clear()
        assert _post(moto_app, agent_stage.stage_id, "reply", agent_stage.player_key, {"text": "y"}).status_code == 202
        assert calls.names == ["TransactWriteItems"]
    finally:
        calls.close()


# ============================================================== the invariant, with failures injected

EXAMPLES = int(os.environ.get("BUTAI_INVARIANT_EXAMPLES", "120"))
SEEN: Counter = Counter()


class Faults:
    """Fails the n-th call made to DynamoDB or S3 (counted from the request's start) with one error.

    The hook runs before moto sees the call, so the failed call changes nothing by itself: whatever a 5xx
    leaves behind was written by an earlier call of the same request."""

    KINDS = {
        "throttled": lambda op: ClientError({"Error": {"Code": "ProvisionedThroughputExceededException",
                                                       "Message": "slow down"}}, op),
        "internal": lambda op: ClientError({"Error": {"Code": "InternalServerError", "Message": "x"},
                                            "ResponseMetadata": {"HTTPStatusCode": 500}}, op),
        "validation": lambda op: ClientError({"Error": {"Code": "ValidationException", "Message": "x"}}, op),
        "bug": lambda op: RuntimeError(f"unexpected failure in {op}"),
    }

    def __init__(self, clients):
        self.clients = clients
        self.plan: tuple[int, str] | None = None
        self.count = 0
        for client in clients:
            client.meta.events.register("before-call.*", self._call)

    def arm(self, nth: int, kind: str) -> None:
        self.plan, self.count = (nth, kind), 0

    def disarm(self) -> None:
        self.plan = None

    def _call(self, model, **_):
        if self.plan is None:
            return None
        self.count += 1
        if self.count == self.plan[0]:
            raise self.KINDS[self.plan[1]](model.name)
        return None

    def close(self):
        for client in self.clients:
            client.meta.events.unregister("before-call.*", self._call)


ids_ = st.one_of(st.sampled_from(PLACES + CHARACTERS + ["屋上", "nobody"]), st.sampled_from(BAD_IDS),
                 st.text(max_size=8))
texts = st.one_of(st.sampled_from(["こんばんは", "流す曲を変えてみたら？", "控え室に行こう", "お邪魔しました", "x"]),
                  st.text(max_size=20))
requests = st.one_of(
    st.fixed_dictionaries({"route": st.just("reply"), "stage": st.sampled_from(["scenario", "scenario", "agent"]),
                           "body": st.fixed_dictionaries({"text": texts}, optional={"move": ids_, "to": ids_})}),
    st.fixed_dictionaries({"route": st.just("speak"), "stage": st.just("agent"),
                           "body": st.fixed_dictionaries({"text": texts}, optional={
                               "expression": st.sampled_from(["smile", "nope"]),
                               "request_id": st.sampled_from(["r-1", "r-2"])})}),
    st.fixed_dictionaries({"route": st.just("fetch_replies"), "stage": st.sampled_from(["agent", "scenario"]),
                           "body": st.fixed_dictionaries({}, optional={"request_id": st.sampled_from(["f-1", "f-2"])}),
                           "seed": st.integers(0, 3)}),
    st.fixed_dictionaries({"route": st.sampled_from(["get", "debug"]), "stage": st.sampled_from(["agent", "scenario"]),
                           "body": st.none()}),
)
faults = st.tuples(st.integers(1, 8), st.sampled_from(sorted(Faults.KINDS)))


@pytest.fixture
def faults_on(moto_app):
    services = moto_app.services
    clients = [services.stage.store._db, services.director.library.s3]
    injected = Faults(clients)
    yield injected
    injected.close()


def test_a_5xx_leaves_every_table_as_it_was_and_no_reply_stalls_a_stage(moto_app, agent_stage, scenario_stage,
                                                                         faults_on):
    stages = {"agent": agent_stage, "scenario": scenario_stage}
    both = [agent_stage.stage_id, scenario_stage.stage_id]
    count = [0]

    @settings(max_examples=EXAMPLES, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(drawn=requests, fault=faults)
    def run(drawn, fault):
        count[0] += 1
        if count[0] % 30 == 0:
            for stage_id in both:
                moto_app.state.clear_history(stage_id)
        stage = stages[drawn["stage"]]
        for i in range(drawn.get("seed", 0)):
            _post(moto_app, stage.stage_id, "reply", stage.player_key, {"text": f"seed {i}"})
        route = drawn["route"]
        key = stage.player_key if route == "reply" else stage.agent_key
        before = moto_app.state(*both)
        faults_on.arm(*fault)
        try:
            if route in ("get", "debug"):
                path = f"/stages/{stage.stage_id}" + ("/debug" if route == "debug" else "")
                r = moto_app.client.http.get(path, headers={"Authorization": f"Bearer {key}"})
            else:
                r = _post(moto_app, stage.stage_id, route, key, drawn["body"])
        finally:
            faults_on.disarm()
        after = moto_app.state(*both)
        note(f"{route} {drawn['body']!r} fault={fault} -> {r.status_code} {r.body[:200]!r}")
        SEEN[f"{route}{'-scenario' if drawn['stage'] == 'scenario' else ''} {r.status_code}"] += 1
        if r.status_code >= 500:
            assert after == before, diff(before, after)
            assert json.loads(r.body)["error"]["code"] in ("unavailable", "internal")
        if drawn["stage"] != "scenario" or route not in ("reply", "fetch_replies"):
            return
        # Whatever happened, the scenario stage plays the next clean reply and leaves nothing unread.
        r = _post(moto_app, scenario_stage.stage_id, "reply", scenario_stage.player_key, {"text": "こんばんは"})
        assert r.status_code == 202 and r.json_body["view"] is not None, r.body
        assert StageState.unread(moto_app.state(scenario_stage.stage_id), scenario_stage.stage_id) == set()

    run()
    folder = OUTPUT / "hardening"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "five-xx-invariant.json").write_text(json.dumps(dict(sorted(SEEN.items())), indent=2))
    assert sum(n for k, n in SEEN.items() if k.endswith(("500", "503"))) >= EXAMPLES // 5, SEEN
