"""The local runtime's edges over real sockets: every method answered in JSON, broken framing answered
rather than dropped, a deep listen backlog, quiet headers, private files, and a local AWS that no web page
can write to."""
from __future__ import annotations

import http.client
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import urllib.parse

import pytest

from butai_tools.local.runtime import LISTEN_BACKLOG
from tests.conftest import ROOT, call

pytestmark = pytest.mark.e2e


def _raw(api: str, request: bytes) -> tuple[int, dict, bytes]:
    """Sends bytes as they are; returns (status, headers, body) of the answer."""
    parts = urllib.parse.urlsplit(api)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock, method=request.split(b" ", 1)[0].decode("latin-1"))
        response.begin()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def _json_error(body: bytes) -> dict:
    payload = json.loads(body)
    assert set(payload) == {"error"} and payload["error"]["code"] and payload["error"]["message"]
    return payload["error"]


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND", "BREW"])
@pytest.mark.parametrize("path", ["/stages/{id}", "/stages/{id}/speak", "/openapi.json", "/", "/app.js"])
def test_any_method_gets_a_json_405(local_runtime, method, path):
    demo = local_runtime.info["stages"]["demo"]
    target = path.replace("{id}", demo["stage_id"])
    status, headers, body = _raw(local_runtime.info["api_url"],
                                 f"{method} {target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode())
    assert status == 405 and headers["content-type"].startswith("application/json"), (status, body[:200])
    assert _json_error(body)["code"] == "method_not_allowed" and headers["allow"]


@pytest.mark.parametrize("request_bytes,field", [
    (b"GET /stages/s_0000000000000000%00 HTTP/1.1\r\nHost: x\r\n\r\n", "path"),
    (b"GET /stages/\x00abc HTTP/1.1\r\nHost: x\r\n\r\n", "path"),
    (b"POST /stages/s_0000000000000000/speak HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "Content-Length"),
    (b"POST /stages/s_0000000000000000/speak HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", "Content-Length"),
    (b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", "Content-Length"),
])
def test_broken_framing_is_a_400_not_a_dropped_connection(local_runtime, request_bytes, field):
    status, headers, body = _raw(local_runtime.info["api_url"], request_bytes)
    assert status == 400 and _json_error(body)["field"] == field


def test_api_answers_say_nosniff_and_server_names_no_python(local_runtime):
    api, demo = local_runtime.info["api_url"], local_runtime.info["stages"]["demo"]
    for method, path, key in (("GET", f"/stages/{demo['stage_id']}", demo["agent_key"]),
                              ("GET", "/stages/s_0000000000000000", demo["agent_key"]),
                              ("GET", "/openapi.json", None), ("GET", "/stages/x/nope", None),
                              ("POST", f"/stages/{demo['stage_id']}/fetch_replies", demo["agent_key"])):
        status, headers, _ = call(api, method, path, key)
        lowered = {k.lower(): v for k, v in headers.items()}
        assert lowered.get("x-content-type-options") == "nosniff", (path, status, headers)
        assert "python" not in lowered.get("server", "").lower(), headers
    status, headers, _ = _raw(api, b"GET /app.js HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 200 and headers["x-content-type-options"] == "nosniff"   # once, not twice
    assert headers["server"] == "butai"


def test_local_json_is_readable_by_its_owner_only(local_runtime, tmp_path):
    path = local_runtime.state_dir / "local.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # and stays so when the CLI rewrites it
    env = {**os.environ, "BUTAI_LOCAL_JSON": str(path)}
    made = subprocess.run([sys.executable, "-m", "butai_tools.cli", "stage", "create", "mode-check"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_the_saved_data_and_its_journal_are_readable_by_their_owner_only(tmp_path):
    """data.json and the journal hold what the tables hold (webhook secrets among it): 0600, like local.json,
    also when an older run left data.json readable by all."""
    from butai_tools.local.runtime import LocalRuntime
    state = tmp_path / "state"
    state.mkdir()
    (state / "data.json").write_text('{"version": 1, "tables": {}, "objects": {}}')
    os.chmod(state / "data.json", 0o644)
    runtime = LocalRuntime(state_dir=state, port=0, demo_stage="demo", scenario_stages={}, rate=0)
    runtime.start()
    try:
        created = runtime.stage_service.create_stage("secrets")
        assert created.stage_id
        runtime.snapshots.save()
        files = [state / "data.json", *state.glob("journal-*.log")]
        assert len(files) >= 2
        assert {p.name: stat.S_IMODE(os.stat(p).st_mode) for p in files} == {p.name: 0o600 for p in files}
    finally:
        runtime.stop()
    assert stat.S_IMODE(os.stat(state / "data.json").st_mode) == 0o600


def test_stage_names_are_unique(local_runtime):
    env = {**os.environ, "BUTAI_LOCAL_JSON": str(local_runtime.state_dir / "local.json")}
    again = subprocess.run([sys.executable, "-m", "butai_tools.cli", "stage", "create", "demo"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "already exists" in again.stderr and again.stdout == ""
    listed = subprocess.run([sys.executable, "-m", "butai_tools.cli", "stage", "list", "--json"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    names = [row["name"] for row in json.loads(listed.stdout)]
    assert names.count("demo") == 1


def test_only_the_page_and_the_images_are_served(local_runtime):
    api = local_runtime.info["api_url"]
    for path in ("/", "/index.html", "/app.js", "/style.css", "/characters/hiyori/manifest.json",
                 "/characters/hiyori/smile.svg"):
        assert _raw(api, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())[0] == 200, path
    # the scenario (the story, spoilers included) and anything else in the bucket
    import boto3
    s3 = boto3.client("s3", endpoint_url=local_runtime.info["aws_endpoint"], region_name="us-east-1",
                      aws_access_key_id="testing", aws_secret_access_key="testing")
    bucket = next(b["Name"] for b in s3.list_buckets()["Buckets"])
    scenarios = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="scenarios/").get("Contents", [])]
    assert scenarios
    for key in scenarios + ["scenarios/", "data.json", "manifest.json"]:
        status, _, body = _raw(api, f"GET /{urllib.parse.quote(key)} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert status == 404 and b"title" not in body, key


def test_the_local_aws_refuses_what_a_web_page_can_send(local_runtime):
    endpoint = local_runtime.info["aws_endpoint"]
    tables = {"TableName": "butai-log", "Item": {"stage_id": {"S": "x"}, "sk": {"S": "x"}}}
    attempts = [
        # a form post or a no-cors fetch from any page the player opens: an Origin, no signature
        ("POST", "/", {"Origin": "http://127.0.0.1:1", "Content-Type": "text/plain",
                       "X-Amz-Target": "DynamoDB_20120810.PutItem"}, json.dumps(tables)),
        ("POST", "/", {"Content-Type": "application/x-amz-json-1.0",
                       "X-Amz-Target": "DynamoDB_20120810.PutItem"}, json.dumps(tables)),
        ("OPTIONS", "/", {"Origin": "http://evil.example", "Access-Control-Request-Method": "PUT"}, ""),
        ("PUT", "/butai-assets/index.html", {"Origin": "http://evil.example"}, "<script>"),
        ("PUT", "/butai-assets/index.html", {}, "<script>"),
    ]
    parts = urllib.parse.urlsplit(endpoint)
    for method, path, headers, body in attempts:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        conn.request(method, path, body=body.encode(), headers=headers)
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        assert response.status == 403, (method, headers, response.status, raw[:200])
        assert response.getheader("Access-Control-Allow-Origin") is None
    with urllib.request.urlopen(local_runtime.info["api_url"] + "/") as page:   # noqa: S310 - local
        assert b"reply-form" in page.read()


import urllib.request  # noqa: E402


def test_a_burst_of_connections_is_queued_not_reset(local_runtime):
    """The listen backlog was 5: bursts of concurrent fetches were reset.  Many connections opened at
    once are all answered now."""
    assert LISTEN_BACKLOG >= 1024
    api, demo = local_runtime.info["api_url"], local_runtime.info["stages"]["demo"]
    parts = urllib.parse.urlsplit(api)
    n, errors, statuses = 200, [], []
    barrier = threading.Barrier(n)

    def one():
        try:
            barrier.wait(timeout=60)
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
            conn.request("GET", f"/stages/{demo['stage_id']}", headers={"Authorization": f"Bearer {demo['agent_key']}"})
            response = conn.getresponse()
            response.read()
            statuses.append(response.status)
            conn.close()
        except Exception as exc:  # noqa: BLE001 - counted
            errors.append(repr(exc))

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert not errors, errors[:5]
    assert statuses.count(200) == n
