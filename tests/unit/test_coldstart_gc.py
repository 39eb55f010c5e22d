"""A new instance starts without the cyclic collector and gets it back after its first request."""
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from chalicelib import coldstart

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import gc, json
import app
during = gc.isenabled()
event = {"resource": "/stages/{stage_id}/reply", "path": "/stages/s1/reply", "httpMethod": "POST",
         "headers": {"Content-Type": "application/json"}, "multiValueHeaders": {},
         "queryStringParameters": None, "multiValueQueryStringParameters": None,
         "pathParameters": {"stage_id": "s1"}, "stageVariables": None,
         "requestContext": {"resourcePath": "/stages/{stage_id}/reply", "httpMethod": "POST",
                            "path": "/api/stages/s1/reply", "stage": "api", "requestId": "r1"},
         "body": "{}", "isBase64Encoded": False}
status = app.app(event, None)["statusCode"]
print(json.dumps({"during": during, "status": status, "after": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


def test_the_app_starts_without_the_collector_and_restores_it_after_the_first_request():
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["during"] is False          # imports and services ran without it
    assert got["status"] == 401            # a request refused before any service still settles
    assert got["after"] is True
    assert got["frozen"] > 10_000          # the start-up's objects, out of later collections' way


def test_settle_leaves_a_collector_it_did_not_pause_alone(monkeypatch):
    monkeypatch.setattr(coldstart, "_paused", False)
    frozen = []
    monkeypatch.setattr(coldstart.gc, "freeze", lambda: frozen.append(1))   # not this test process
    gc.disable()
    try:
        coldstart.begin()                  # already off: not ours to turn back on
        coldstart.settle()
        assert not gc.isenabled()
    finally:
        gc.enable()
    coldstart.begin()
    assert not gc.isenabled() and coldstart.paused()
    coldstart.settle()
    assert gc.isenabled() and not coldstart.paused() and frozen == [1]


WEBSOCKET_CHILD = r"""
import gc, json
import app
import chalicelib.push.lambda_handlers as handlers
during = gc.isenabled()
seen = []

def on_message(connection_id, body):
    seen.append(connection_id)
    if len(seen) == 1:
        raise RuntimeError("the first subscription fails: the collector must come back all the same")

handlers.on_message = on_message
after = []
for n in range(3):
    event = {"requestContext": {"routeKey": "$default", "eventType": "MESSAGE", "connectionId": f"c{n}",
                                "domainName": "abc.execute-api.us-east-1.amazonaws.com", "stage": "api",
                                "apiId": "abc", "requestId": f"r{n}"},
             "body": "{}", "isBase64Encoded": False}
    try:
        app.push(event, None)
    except RuntimeError:
        pass
    after.append(gc.isenabled())
print(json.dumps({"during": during, "after": after, "seen": seen, "frozen": gc.get_freeze_count()}))
"""


def test_the_websocket_function_gets_the_collector_back_after_its_first_message():
    # The WebSocket message function imports app.py too (handler app.push), so it starts paused as well;
    # without its own settle the collector stayed off however many messages it served.
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1"}
    out = subprocess.run([sys.executable, "-c", WEBSOCKET_CHILD], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=True, env=env)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["during"] is False
    assert got["seen"] == ["c0", "c1", "c2"]
    assert got["after"] == [True, True, True]        # from the first message on, a failed one included
    assert got["frozen"] > 10_000
