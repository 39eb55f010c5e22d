"""Stage isolation: a key of one stage does nothing on another.

Two stages: A, an agent stage, and B, a scenario stage playing the reference
scenario.  Each has an unread reply, a current line and (B) played turns.
Every route called on one with the other's agent key or player key — with
valid bodies, in every way of writing the key that counts for its own stage —
is refused with 401 wrong_key in butai's JSON shape, answers nothing about the
other stage (no 304 for its ETag, no debug turns), and changes nothing in
either stage.  The same calls with the stage's own keys then succeed, so
the refusals are the keys' doing.  The same holds over real sockets on the
local runtime, and for keys that were rotated away.
"""
from __future__ import annotations

import json

import pytest

from chalicelib.stage.models import ReplyRequest, SpeakRequest
from tests.hardening._support import body_text, error_of, header, http_call


def key_forms(key: str) -> list[str]:
    """How a key is sent: exactly `Bearer <key>` (no other spelling counts, docs/stage.md)."""
    return [f"Bearer {key}"]


def calls(stage_id: str, version: str) -> list[tuple[str, str, dict | None, dict]]:
    """(method, path, body, extra headers): every route, with bodies that would be valid on the right key."""
    base = f"/stages/{stage_id}"
    return [
        ("POST", f"{base}/speak", {"text": "乗っ取り", "expression": "smile"}, {}),
        ("POST", f"{base}/speak", {"text": "乗っ取り", "speaker": "偽物", "request_id": "iso-1"}, {}),
        ("POST", f"{base}/reply", {"text": "控え室に行こう"}, {}),
        ("POST", f"{base}/reply", {"text": "こんばんは", "to": "神楽坂葵"}, {}),
        ("POST", f"{base}/reply", {"text": "行く", "move": "控え室"}, {}),
        ("POST", f"{base}/fetch_replies", None, {}),
        ("POST", f"{base}/fetch_replies", {"request_id": "iso-f"}, {}),
        ("GET", base, None, {}),
        ("GET", base, None, {"If-None-Match": f'"{version}"'}),
        ("GET", f"{base}/debug", None, {}),
        ("GET", f"{base}/debug?limit=50", None, {}),
    ]


@pytest.fixture
def stages(moto_app, agent_stage, scenario_stage):
    services = moto_app.services
    # played turns on B, then an unread reply on each stage (stored, not yet answered)
    services.director.reply(scenario_stage.stage_id, scenario_stage.player_key, ReplyRequest(text="こんばんは"))
    services.director.reply(scenario_stage.stage_id, scenario_stage.player_key,
                            ReplyRequest(text="流す曲を変えてみたら？"))
    services.stage.speak(agent_stage.stage_id, agent_stage.agent_key, SpeakRequest(text="やあ"))
    for stage in (agent_stage, scenario_stage):
        services.stage.reply(stage.stage_id, stage.player_key, ReplyRequest(text="まだ読まれていない返事"))
    return {"A": agent_stage, "B": scenario_stage}


def send(client, method, path, key_header, body, extra):
    headers = {"Authorization": key_header, "Content-Type": "application/json", **extra}
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
    return client.http.request(method, path, headers=headers, body=data)


@pytest.mark.parametrize("victim,intruder", [("B", "A"), ("A", "B")])
@pytest.mark.parametrize("role", ["agent", "player"])
def test_a_key_of_one_stage_does_nothing_on_another(moto_app, stages, victim, intruder, role):
    target, other = stages[victim], stages[intruder]
    key = other.agent_key if role == "agent" else other.player_key
    ids = [target.stage_id, other.stage_id]
    before = moto_app.state(*ids)
    version = moto_app.state.version(before, target.stage_id)
    answered = 0
    for method, path, body, extra in calls(target.stage_id, version):
        for form in key_forms(key):
            r = send(moto_app.client, method, path, form, body, extra)
            err = error_of(r)
            assert (r.status_code, err["code"], err["field"]) == (401, "wrong_key", "Authorization"), \
                (method, path, r.status_code, err)
            assert header(r, "ETag") is None and "turns" not in body_text(r)
            for secret in (target.agent_key, target.player_key, key):
                assert secret not in body_text(r)
            assert moto_app.state(*ids) == before, (method, path, form)
            answered += 1
    assert answered == len(calls(target.stage_id, version)) * len(key_forms(key))


@pytest.mark.parametrize("victim", ["A", "B"])
def test_the_same_calls_with_the_stages_own_keys_succeed(moto_app, stages, victim):
    """The control: with its own keys each call does what it is for (so the refusals above are the keys')."""
    target = stages[victim]
    client = moto_app.client
    version = moto_app.state.version(moto_app.state(target.stage_id), target.stage_id)
    agent, player = f"Bearer {target.agent_key}", f"Bearer {target.player_key}"
    r = send(client, "GET", f"/stages/{target.stage_id}", player, None, {"If-None-Match": f'"{version}"'})
    assert r.status_code == 304
    r = send(client, "POST", f"/stages/{target.stage_id}/fetch_replies", agent, None, {})
    assert [x["text"] for x in r.json_body] == ["まだ読まれていない返事"]
    r = send(client, "POST", f"/stages/{target.stage_id}/speak", agent, {"text": "本物", "expression": "smile"}, {})
    assert r.status_code == 200
    r = send(client, "POST", f"/stages/{target.stage_id}/reply", player, {"text": "こんばんは"}, {})
    assert r.status_code == 202
    r = send(client, "GET", f"/stages/{target.stage_id}/debug?limit=50", agent, None, {})
    if victim == "B":
        assert r.status_code == 200 and len(r.json_body["turns"]) == 3
    else:
        assert error_of(r)["code"] == "not_a_scenario_stage"


def test_rotated_keys_do_nothing_and_the_new_ones_work(moto_app, stages):
    services, client = moto_app.services, moto_app.client
    for stage in stages.values():
        new = services.stage.rotate_keys(stage.stage_id)
        ids = [s.stage_id for s in stages.values()]
        before = moto_app.state(*ids)
        version = moto_app.state.version(before, stage.stage_id)
        for old in (stage.agent_key, stage.player_key):
            for method, path, body, extra in calls(stage.stage_id, version):
                r = send(client, method, path, f"Bearer {old}", body, extra)
                assert (r.status_code, error_of(r)["code"]) == (401, "wrong_key"), (method, path)
        assert moto_app.state(*ids) == before
        r = send(client, "POST", f"/stages/{stage.stage_id}/fetch_replies", f"Bearer {new['agent_key']}", None, {})
        assert [x["text"] for x in r.json_body] == ["まだ読まれていない返事"]


@pytest.mark.e2e
def test_isolation_over_real_sockets(local_runtime):
    """`demo` (agent stage) and `chinoike` (scenario stage) of the local runtime: each one's keys on the other."""
    api = local_runtime.info["api_url"]
    demo, chinoike = local_runtime.info["stages"]["demo"], local_runtime.info["stages"]["chinoike"]
    for target, other in ((chinoike, demo), (demo, chinoike)):
        status, headers, view = http_call(api, "GET", f"/stages/{target['stage_id']}", target["agent_key"])
        assert status == 200
        etag = headers["ETag"]
        for key in (other["agent_key"], other["player_key"]):
            for method, path, body, extra in calls(target["stage_id"], etag.strip('"')):
                status, _, answer = http_call(api, method, path, key, body, extra)
                assert status == 401 and answer["error"]["code"] == "wrong_key", (method, path, status, answer)
        status, headers, after = http_call(api, "GET", f"/stages/{target['stage_id']}", target["agent_key"])
        assert status == 200 and headers["ETag"] == etag and after == view
