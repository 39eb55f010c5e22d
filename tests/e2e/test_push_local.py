"""The page's push socket on the local runtime (`butai run`), over real sockets with the websockets client:
subscription, one view per change, refusals (key first), gone sockets, rotated keys, views too large."""
import json
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from chalicelib import aws, context, tables
from chalicelib.config import Settings
from tests.conftest import call

pytestmark = pytest.mark.e2e
WAIT_S = 10


@pytest.fixture(scope="module")
def stages(local_runtime):
    return context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"])).stage


def socket(runtime):
    return connect(runtime.info["api_url"].replace("http://", "ws://") + "/push", open_timeout=WAIT_S)


def subscribe(ws, stage_id, key):
    ws.send(json.dumps({"action": "subscribe", "stage": stage_id, "key": key}))
    return json.loads(ws.recv(timeout=WAIT_S))


def subscriptions(runtime, stage_id):
    settings = Settings(aws_endpoint=runtime.info["aws_endpoint"])
    got = aws.client("dynamodb", settings).query(
        TableName=settings.table_log, ConsistentRead=True, KeyConditionExpression="stage_id = :s AND begins_with(sk, :p)",
        ExpressionAttributeValues={":s": {"S": stage_id}, ":p": {"S": tables.LOG_CONNECTION_PREFIX}})
    return [item["sk"]["S"] for item in got["Items"]]


def view_of(ws, spoken):
    """The view pushed for ``spoken``: one for a line spoken just before the subscription may come first."""
    while True:
        message = json.loads(ws.recv(timeout=WAIT_S))
        if message["type"] == "view" and message["view"]["version"] == spoken["version"]:
            return message["view"]


def speak(runtime, created, text, key=None):
    status, _, body = call(runtime.info["api_url"], "POST", f"/stages/{created.stage_id}/speak",
                           key or created.agent_key, {"text": text})
    assert status == 200, body
    return body


def test_each_change_arrives_as_the_view_a_get_answers(local_runtime, stages):
    created = stages.create_stage("push-views")
    api = local_runtime.info["api_url"]
    with socket(local_runtime) as player, socket(local_runtime) as agent:
        first = subscribe(player, created.stage_id, created.player_key)
        assert first["type"] == "subscribed" and first["stage"] == created.stage_id and first["version"]
        assert subscribe(agent, created.stage_id, created.agent_key)["type"] == "subscribed"   # either key, as GET
        spoken = speak(local_runtime, created, "押し届けます")
        for ws in (player, agent):
            message = json.loads(ws.recv(timeout=WAIT_S))
            assert message["type"] == "view" and message["view"]["version"] == spoken["version"]
        _, _, view = call(api, "GET", f"/stages/{created.stage_id}", created.player_key)
        assert message["view"] == view and "after" not in message      # the whole (short) log: what GET answers

        status, _, accepted = call(api, "POST", f"/stages/{created.stage_id}/reply", created.player_key,
                                   {"text": "受け取った"})
        assert status == 202
        pushed = json.loads(player.recv(timeout=WAIT_S))
        # Only what is new, after the entry the page already has.
        assert pushed["after"] == spoken["id"]
        assert [(e["id"], e["role"], e["text"]) for e in pushed["view"]["log"]] == [
            (accepted["id"], "player", "受け取った")]
        _, _, view = call(api, "GET", f"/stages/{created.stage_id}", created.player_key)
        assert pushed["view"] == {**view, "log": view["log"][-1:]}
        # A read changes nothing, so it pushes nothing; a keep-alive ping is not answered and changes nothing.
        call(api, "GET", f"/stages/{created.stage_id}", created.player_key)
        player.send(json.dumps({"action": "ping"}))
        with pytest.raises(TimeoutError):
            player.recv(timeout=0.5)
        speak(local_runtime, created, "まだ聞こえますか")
        assert json.loads(player.recv(timeout=WAIT_S))["view"]["current"]["text"] == "まだ聞こえますか"


@pytest.mark.parametrize("message, code", [
    ("not json", "invalid_json"),
    ('["subscribe"]', "invalid_request"),
    ('{"action": "subscribe", "stage": "STAGE"}', "missing_key"),
    ('{"action": "subscribe", "stage": "STAGE", "key": "bkp_wrong"}', "wrong_key"),
    ('{"action": "subscribe", "stage": "STAGE", "key": "bkp_wrong", "more": 1}', "wrong_key"),
    ('{"action": "subscribe", "stage": "STAGE", "key": "AGENT", "more": 1}', "invalid_request"),
    ('{"action": "listen", "stage": "STAGE", "key": "PLAYER"}', "invalid_request"),
    ('{"action": "subscribe", "stage": "s_0000000000000000", "key": "PLAYER"}', "stage_not_found"),
])
def test_a_refused_subscription_is_answered_and_closed(local_runtime, stages, message, code):
    created = stages.create_stage("push-refused")
    body = message.replace("STAGE", created.stage_id).replace("AGENT", created.agent_key) \
        .replace("PLAYER", created.player_key)
    with socket(local_runtime) as ws:
        ws.send(body)
        answer = json.loads(ws.recv(timeout=WAIT_S))
        assert answer["type"] == "error" and answer["error"]["code"] == code, answer
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=WAIT_S)
        assert closed.value.rcvd.code == 1008          # policy violation
    assert subscriptions(local_runtime, created.stage_id) == []
    if code == "invalid_request" and "more" in message:
        assert answer["error"]["field"] == "more"


def test_an_oversized_message_is_refused_unread(local_runtime):
    with socket(local_runtime) as ws:
        ws.send("x" * 5000)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=WAIT_S)
        assert closed.value.rcvd.code == 1009          # message too big


def test_a_closed_socket_is_found_gone_and_its_subscription_removed(local_runtime, stages):
    created = stages.create_stage("push-gone")
    with socket(local_runtime) as stays:
        subscribe(stays, created.stage_id, created.player_key)
        with socket(local_runtime) as leaves:
            subscribe(leaves, created.stage_id, created.player_key)
        assert len(subscriptions(local_runtime, created.stage_id)) == 2
        speak(local_runtime, created, "まだいますか")
        assert json.loads(stays.recv(timeout=WAIT_S))["type"] == "view"
    # The second push finds both gone: nothing is left to send to.
    assert len(subscriptions(local_runtime, created.stage_id)) == 1
    speak(local_runtime, created, "誰もいない")
    with socket(local_runtime) as ws:
        subscribe(ws, created.stage_id, created.player_key)       # a fan-out after this one sees one subscription
        assert view_of(ws, speak(local_runtime, created, "ひとり"))["current"]["text"] == "ひとり"
    assert len(subscriptions(local_runtime, created.stage_id)) == 1


def test_a_rotated_key_closes_its_socket_at_the_next_change(local_runtime, stages):
    created = stages.create_stage("push-rotate")
    with socket(local_runtime) as old_key, socket(local_runtime) as agent:
        subscribe(old_key, created.stage_id, created.player_key)
        subscribe(agent, created.stage_id, created.agent_key)
        new = stages.rotate_keys(created.stage_id, "player")      # another process: seen at the next change
        speak(local_runtime, created, "鍵が変わりました")
        assert json.loads(agent.recv(timeout=WAIT_S))["type"] == "view"
        with pytest.raises(ConnectionClosed) as closed:
            old_key.recv(timeout=WAIT_S)                           # closed without the view
        assert closed.value.rcvd.code == 1008
        with socket(local_runtime) as again:
            assert subscribe(again, created.stage_id, created.player_key)["error"]["code"] == "wrong_key"
        with socket(local_runtime) as fresh:
            assert subscribe(fresh, created.stage_id, new["player_key"])["type"] == "subscribed"


def test_a_view_over_one_frame_carries_its_newest_entries_after_a_named_one(local_runtime, stages):
    created = stages.create_stage("push-large")
    ids = [speak(local_runtime, created, f"{i:02d}" + "長" * 1998)["id"] for i in range(12)]   # ~6 KB each
    with socket(local_runtime) as ws:
        subscribe(ws, created.stage_id, created.player_key)
        spoken = speak(local_runtime, created, "長い舞台")
        while True:      # the view of a line spoken just before the subscription may come first
            raw = ws.recv(timeout=WAIT_S)
            message = json.loads(raw)
            assert len(raw.encode()) <= 32000                      # one frame, one metered message
            if message["view"]["version"] == spoken["version"]:
                break
    assert message["type"] == "view"
    window = [e["id"] for e in message["view"]["log"]]
    assert window[-1] == spoken["id"] and 1 <= len(window) < 13
    everything = ids + [spoken["id"]]
    assert message["after"] == everything[everything.index(window[0]) - 1]   # the entry just before them


def test_only_an_upgrade_to_push_reaches_the_socket(local_runtime):
    api = local_runtime.info["api_url"]
    with pytest.raises(urllib.error.HTTPError) as plain:
        urllib.request.urlopen(api + "/push", timeout=WAIT_S)
    assert plain.value.code in (400, 426)                          # the library's answer: not a WebSocket request
    assert plain.value.headers["X-Content-Type-Options"] == "nosniff" and plain.value.headers["Server"] == "butai"
    with pytest.raises(InvalidStatus) as elsewhere:
        connect(api.replace("http://", "ws://") + "/stages/s_0000000000000000", open_timeout=WAIT_S)
    # the API's own answer (the key first), in its own shape
    assert elsewhere.value.response.status_code == 401
    assert json.loads(elsewhere.value.response.body)["error"]["code"] == "missing_key"
    with urllib.request.urlopen(api + "/") as page:                # the page is still served beside it
        assert page.status == 200


def _stalled_socket(runtime, stage_id: str, key: str):
    """A page socket that subscribes and then never reads again: a raw TCP socket with a tiny receive
    buffer, the WebSocket handshake and one masked frame written by hand (a library client would read)."""
    import base64
    import os
    import socket as sockets
    import urllib.parse
    parts = urllib.parse.urlsplit(runtime.info["api_url"])
    sock = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
    sock.setsockopt(sockets.SOL_SOCKET, sockets.SO_RCVBUF, 1024)
    sock.settimeout(WAIT_S)
    sock.connect((parts.hostname, parts.port))
    nonce = base64.b64encode(os.urandom(16))
    sock.sendall(b"GET /push HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: " + nonce + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    payload = json.dumps({"action": "subscribe", "stage": stage_id, "key": key}).encode()
    mask = os.urandom(4)
    assert len(payload) < 126
    sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    return sock


def test_a_socket_that_never_reads_is_dropped_and_holds_up_no_page(local_runtime, stages):
    """One socket stops reading: every page that reads still gets every push (its own stage's and other
    stages'), new pages too, and the stalled one is dropped and its subscription removed (before: the
    fan-out's blocking send waited on it, and no page got a push until it closed)."""
    import time
    stalled_stage, other_stage = stages.create_stage("push-stalled"), stages.create_stage("push-bystander")
    long_line = "長い台詞、" * 380          # about 5.7 KB a push: the stalled socket's buffers fill in a few
    with socket(local_runtime) as same, socket(local_runtime) as other:
        assert subscribe(same, stalled_stage.stage_id, stalled_stage.player_key)["type"] == "subscribed"
        assert subscribe(other, other_stage.stage_id, other_stage.player_key)["type"] == "subscribed"
        [page] = subscriptions(local_runtime, stalled_stage.stage_id)
        attacker = _stalled_socket(local_runtime, stalled_stage.stage_id, stalled_stage.player_key)
        try:
            deadline = time.monotonic() + WAIT_S
            while len(subscriptions(local_runtime, stalled_stage.stage_id)) < 2:
                assert time.monotonic() < deadline, "the stalled socket never subscribed"
                time.sleep(0.05)
            [stalled] = set(subscriptions(local_runtime, stalled_stage.stage_id)) - {page}
            spoken = 0
            deadline = time.monotonic() + 90
            # Until the stalled socket is dropped (its queue full, or a send held past the send timeout) and its
            # subscription removed, and a few lines more: each line reaches both reading pages.
            while stalled in subscriptions(local_runtime, stalled_stage.stage_id) or spoken < 40:
                assert time.monotonic() < deadline, "the stalled socket was never dropped"
                spoken += 1
                line = speak(local_runtime, stalled_stage, f"{spoken} {long_line}")
                assert view_of(same, line)["current"]["text"].startswith(f"{spoken} ")
                elsewhere = speak(local_runtime, other_stage, f"よそ {spoken}")
                assert view_of(other, elsewhere)["current"]["text"] == f"よそ {spoken}"
            # A page that opens now is served too.
            with socket(local_runtime) as late:
                assert subscribe(late, stalled_stage.stage_id, stalled_stage.player_key)["type"] == "subscribed"
                line = speak(local_runtime, stalled_stage, "後から来たページにも")
                assert view_of(late, line)["current"]["text"] == "後から来たページにも"
                assert view_of(same, line)["current"]["text"] == "後から来たページにも"
        finally:
            attacker.close()
    assert stalled not in subscriptions(local_runtime, stalled_stage.stage_id)
