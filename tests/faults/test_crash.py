"""`kill -9` of `butai run` during a burst of writes, three times over one state folder: every write the
runtime acknowledged is there after each restart (the journal is synced before a write is answered and
replayed over the last snapshot at start)."""
import os
import signal
import stat
import threading
import time

from chalicelib import context
from chalicelib.config import Settings
from tests.conftest import LocalProcess
from tests.faults.test_sigterm import _post

TRIALS = 3
# Writes of each kind acknowledged before the kill, per burst (BUTAI_CRASH_BURST for the longer runs of
# docs/reliability.md).
BURST = int(os.environ.get("BUTAI_CRASH_BURST", "20"))


def test_kill_9_during_bursts_loses_no_acknowledged_write(tmp_path):
    runtime = LocalProcess(tmp_path / "state")
    info = runtime.start()
    api, demo = info["api_url"], info["stages"]["demo"]
    sid = demo["stage_id"]
    lines, replies, handled = set(), set(), set()      # acknowledged by the runtime, over all trials
    try:
        for trial in range(TRIALS):
            lock, stop = threading.Lock(), threading.Event()

            def agent(n):
                i = 0
                while not stop.is_set():
                    status, body = _post(api, f"/stages/{sid}/speak", demo["agent_key"],
                                         {"text": f"t{trial}-a{n}-{i}", "request_id": f"t{trial}-a{n}-{i}"})
                    if status is None:
                        return
                    if status == 200:
                        with lock:
                            lines.add(body["id"])
                    i += 1

            def player(n):
                i = 0
                while not stop.is_set():
                    status, body = _post(api, f"/stages/{sid}/reply", demo["player_key"],
                                         {"text": f"t{trial}-p{n}-{i}"})
                    if status is None:
                        return
                    if status == 202:
                        with lock:
                            replies.add(body["id"])
                    i += 1

            def acknowledger():
                # Fetches and acknowledges: an acknowledgement is a write like any other.
                while not stop.is_set():
                    status, got = _post(api, f"/stages/{sid}/fetch_replies", demo["agent_key"], {})
                    if status is None:
                        return
                    if status == 200 and got:
                        status, result = _post(api, f"/stages/{sid}/ack_replies", demo["agent_key"],
                                               {"ids": [r["id"] for r in got]})
                        if status is None:
                            return
                        if status == 200:
                            with lock:
                                handled.update(result["acked"])

            threads = [threading.Thread(target=agent, args=(n,), daemon=True) for n in range(3)] + \
                      [threading.Thread(target=player, args=(n,), daemon=True) for n in range(3)] + \
                      [threading.Thread(target=acknowledger, daemon=True)]
            before = (len(lines), len(replies), len(handled))
            for t in threads:
                t.start()
            try:
                # Killed once the burst is well under way (counted, not timed: a loaded machine is slower).
                deadline = time.time() + 180
                while time.time() < deadline:
                    with lock:
                        if (len(lines) - before[0] > BURST and len(replies) - before[1] > BURST
                                and len(handled) - before[2] > BURST // 4):
                            break
                    time.sleep(0.05)
                runtime.proc.send_signal(signal.SIGKILL)
                assert runtime.proc.wait(timeout=30) == -signal.SIGKILL
            finally:
                stop.set()
            for t in threads:
                t.join(timeout=30)
            assert len(lines) - before[0] > BURST and len(replies) - before[1] > BURST
            assert len(handled) - before[2] > BURST // 4

            info = runtime.start()
            api = info["api_url"]
            store = context.build(Settings(aws_endpoint=info["aws_endpoint"])).stage.store
            log_ids = {e.id for e in store.recent_log(sid, 10**6)}
            assert lines <= log_ids, f"trial {trial}: {len(lines - log_ids)} acknowledged lines lost"
            assert replies <= log_ids, f"trial {trial}: {len(replies - log_ids)} acknowledged replies lost"
            pending = store.pending_replies(sid)
            unacknowledged = {r.id for r in pending.claimable}
            assert not handled & unacknowledged, "an acknowledged reply came back"
            print(f"kill -9 #{trial + 1}: {len(lines)} lines, {len(replies)} replies and {len(handled)} "
                  f"acknowledgements acknowledged so far, all there after the restart")
            state = tmp_path / "state"
            assert stat.S_IMODE(os.stat(state / "data.json").st_mode) == 0o600
            assert all(stat.S_IMODE(os.stat(p).st_mode) == 0o600 for p in state.glob("journal-*.log"))
        assert runtime.stop() == 0
    finally:
        runtime.kill_if_running()
