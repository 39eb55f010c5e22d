"""SIGTERM during a burst of writes loses no acknowledged write after restart."""
import http.client
import json
import signal
import threading
import time
import urllib.error
import urllib.request

from chalicelib import context
from chalicelib.config import Settings
from tests.conftest import LocalProcess


def _post(api, path, key, body):
    req = urllib.request.Request(api + path, method="POST", data=json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, None
    except (OSError, http.client.HTTPException):
        return None, None      # connection refused or reset, or the answer cut short: not acknowledged


def test_sigterm_during_a_burst_loses_no_acknowledged_write(tmp_path):
    runtime = LocalProcess(tmp_path / "state")
    info = runtime.start()
    api, demo = info["api_url"], info["stages"]["demo"]
    sid = demo["stage_id"]
    acked_lines, acked_replies = [], []
    lock, stop = threading.Lock(), threading.Event()

    def agent(n):
        i = 0
        while not stop.is_set():
            status, body = _post(api, f"/stages/{sid}/speak", demo["agent_key"], {"text": f"a{n}-{i}"})
            if status == 200:
                with lock:
                    acked_lines.append(body["id"])
            elif status is None:
                return
            i += 1

    def player(n):
        i = 0
        while not stop.is_set():
            status, body = _post(api, f"/stages/{sid}/reply", demo["player_key"], {"text": f"p{n}-{i}"})
            if status == 202:
                with lock:
                    acked_replies.append(f"p{n}-{i}")
            elif status is None:
                return
            i += 1

    # Daemon threads, stopped in `finally`: a failed assertion must not leave them hammering a runtime.
    threads = [threading.Thread(target=agent, args=(n,), daemon=True) for n in range(3)] + \
              [threading.Thread(target=player, args=(n,), daemon=True) for n in range(3)]
    for t in threads:
        t.start()
    try:
        # SIGTERM once the burst is well under way (counted, not timed: a loaded machine acknowledges more slowly).
        deadline = time.time() + 120
        while time.time() < deadline:
            with lock:
                if len(acked_lines) > 10 and len(acked_replies) > 10:
                    break
            time.sleep(0.05)
        assert runtime.stop(signal.SIGTERM) == 0   # mid-burst
    finally:
        stop.set()
        runtime.kill_if_running()
    for t in threads:
        t.join(timeout=30)
    assert len(acked_lines) > 10 and len(acked_replies) > 10

    again = runtime.start()
    try:
        store = context.build(Settings(aws_endpoint=again["aws_endpoint"])).stage.store
        log_ids = {e.id for e in store.recent_log(sid, 10**6)}
        assert set(acked_lines) <= log_ids                       # every acknowledged line is there
        unread = {r.text for r in store.unread_replies(sid)}
        assert set(acked_replies) <= unread                      # every acknowledged reply, still unread
    finally:
        assert runtime.stop() == 0
