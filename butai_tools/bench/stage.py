"""`butai bench stage`: the protocol's latency and DynamoDB cost on the local stack.

Starts the local runtime in this process (moto on 127.0.0.1, the API on an
ephemeral port), drives it over real HTTP one operation at a time, and counts
the DynamoDB requests each operation makes with botocore's event hooks on the
API's own client.
"""
from __future__ import annotations

import collections
import json
import os
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


def register_bench(sub) -> None:
    p = sub.add_parser("stage", help="per-operation latency and DynamoDB requests of the stage protocol")
    p.add_argument("--ops", type=int, default=300, help="operations of each kind (default 300)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


class _Http:
    def __init__(self, api: str):
        self.api = api

    def __call__(self, method: str, path: str, key: str, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method, headers={
            "Authorization": f"Bearer {key}", "Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.headers, err.read()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_bench(ops: int) -> dict:
    from butai_tools.local.runtime import LocalRuntime
    with tempfile.TemporaryDirectory() as tmp:
        runtime = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, saver_interval=3600, rate=0)
        runtime.start()
        try:
            return _drive(runtime, ops)
        finally:
            runtime.stop()


def _drive(runtime, ops: int) -> dict:
    calls: list[str] = []
    store_client = runtime.stage_service.store._db
    store_client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    http = _Http(runtime.api_url)
    stage = runtime.stage_service.create_stage("bench")
    sid, agent, player = stage.stage_id, stage.agent_key, stage.player_key
    results: dict[str, dict] = collections.OrderedDict()

    def measure(name: str, action, prepare=None, expect=(200,)):
        times, counts, kinds = [], [], collections.Counter()
        for i in range(ops):
            if prepare:
                prepare(i)
            calls.clear()
            start = time.perf_counter()
            status = action(i)
            elapsed = (time.perf_counter() - start) * 1000
            if status not in expect:
                raise RuntimeError(f"{name}: unexpected status {status}")
            times.append(elapsed)
            counts.append(len(calls))
            kinds.update(calls)
        total = sum(times) / 1000
        results[name] = {
            "p50_ms": round(statistics.median(times), 2), "p99_ms": round(_percentile(times, 0.99), 2),
            "ops_per_s": round(ops / total, 1),
            "dynamodb_requests": statistics.median(counts), "max_dynamodb_requests": max(counts),
            "calls": {k: round(v / ops, 2) for k, v in kinds.items()},
        }

    # warm the per-process caches (the stage's character and kind, the manifest) once
    http("POST", f"/stages/{sid}/speak", agent, {"text": "warm", "expression": "smile"})
    http("POST", f"/stages/{sid}/reply", player, {"text": "warm"})
    measure("speak", lambda i: http("POST", f"/stages/{sid}/speak", agent,
                                    {"text": f"台詞 {i}", "expression": "smile"})[0])
    http("POST", f"/stages/{sid}/speak", agent, {"text": "x", "request_id": "bench-retry"})
    measure("speak (retried request_id)", lambda i: http("POST", f"/stages/{sid}/speak", agent,
                                                         {"text": "x", "request_id": "bench-retry"})[0])
    measure("reply", lambda i: http("POST", f"/stages/{sid}/reply", player, {"text": f"返事 {i}"})[0],
            expect=(202,))
    # Claim the backlog, then one fresh reply before each fetch.  Each fetch acknowledges what the one before
    # handed out, as an agent's loop does (one request: docs/stage.md).
    handled: list[str] = []

    def fetch(i: int) -> int:
        status, _, raw = http("POST", f"/stages/{sid}/fetch_replies", agent, {"ack": handled[:100]})
        handled[:100] = []
        handled.extend(r["id"] for r in json.loads(raw))
        return status

    while fetch(0) == 200 and handled:
        pass
    measure("fetch_replies (1 unread, ack 1)", fetch,
            prepare=lambda i: runtime.stage_service.reply(sid, player, _reply(f"r{i}")))
    fetch(0)
    measure("fetch_replies (none)", lambda i: http("POST", f"/stages/{sid}/fetch_replies", agent)[0])
    _, headers, _ = http("GET", f"/stages/{sid}", player)
    tag = headers["ETag"]
    measure("poll unchanged (304)", lambda i: http("GET", f"/stages/{sid}", player,
                                                   headers={"If-None-Match": tag})[0], expect=(304,))
    measure("poll changed (200)", lambda i: http("GET", f"/stages/{sid}", player,
                                                 headers={"If-None-Match": tag})[0],
            prepare=lambda i: runtime.stage_service.speak(sid, agent, _speak(f"更新 {i}")))
    return {"ops": ops, "results": results, "journal": _journal_cost(runtime, http, sid, agent, player, ops)}


def _journal_cost(runtime, http, sid: str, agent: str, player: str, ops: int) -> dict:
    """What the journal costs a write: the same writes with the journal on and off, alternating so that both
    see the same machine, against the floor of one append + fdatasync of a record of the same size in the same
    folder; then a burst of concurrent writers, where one sync covers several writes (group commit)."""
    app = runtime.local_aws.app
    journal = app.journal
    timings: dict[str, list[float]] = {"speak on": [], "speak off": [], "reply on": [], "reply off": []}
    for i in range(ops):
        for state in (("on", "off") if i % 2 == 0 else ("off", "on")):
            app.journal = journal if state == "on" else None
            writes = (("speak", "speak", agent, {"text": f"記録 {i}", "expression": "smile"}),
                      ("reply", "reply", player, {"text": f"返 {i}"}))
            for name, route, key, body in writes:
                start = time.perf_counter()
                http("POST", f"/stages/{sid}/{route}", key, body)
                timings[f"{name} {state}"].append((time.perf_counter() - start) * 1000)
    app.journal = journal
    floor = _fsync_floor(journal.directory, ops)
    records, syncs = journal._written, journal.syncs
    burst = _burst(http, sid, player, writers=8, each=max(5, ops // 8))
    median = {k: statistics.median(v) for k, v in timings.items()}
    out = {"fsync_floor_p50_ms": round(floor, 2)}
    for name in ("speak", "reply"):
        cost = median[f"{name} on"] - median[f"{name} off"]
        out[name] = {"journal_on_p50_ms": round(median[f"{name} on"], 2),
                     "journal_off_p50_ms": round(median[f"{name} off"], 2),
                     "cost_per_write_ms": round(cost, 2), "cost_in_floors": round(cost / floor, 2)}
    out["burst"] = {**burst, "records_per_sync": round((journal._written - records) / max(1, journal.syncs - syncs), 2)}
    return out


def _fsync_floor(directory: Path, samples: int) -> float:
    """The median of one append of a ~1 KB record and its fdatasync, in the journal's own folder."""
    path = directory / "bench-fsync.tmp"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            os.write(fd, b"x" * 1024)
            os.fdatasync(fd)
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times)
    finally:
        os.close(fd)
        path.unlink()


def _burst(http, sid: str, player: str, writers: int, each: int) -> dict:
    """``writers`` players replying at once, ``each`` replies apiece: writes per second through the journal."""
    def write(n: int) -> None:
        for i in range(each):
            http("POST", f"/stages/{sid}/reply", player, {"text": f"同時 {n}-{i}"})
    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return {"writers": writers, "writes": writers * each, "writes_per_s": round(writers * each / elapsed, 1)}


def _reply(text):
    from chalicelib.stage.models import ReplyRequest
    return ReplyRequest(text=text)


def _speak(text):
    from chalicelib.stage.models import SpeakRequest
    return SpeakRequest(text=text)


def _run(args) -> int:
    report = run_bench(args.ops)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"butai bench stage: {report['ops']} operations of each kind, local stack (moto + chalice local), "
          "sequential over HTTP")
    print(f"{'operation':<32} {'p50 ms':>8} {'p99 ms':>8} {'ops/s':>8} {'DynamoDB req':>13}  calls per op")
    for name, r in report["results"].items():
        calls = ", ".join(f"{k} {v:g}" for k, v in r["calls"].items())
        print(f"{name:<32} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['ops_per_s']:>8.1f} "
              f"{r['dynamodb_requests']:>13g}  {calls}")
    journal = report["journal"]
    print(f"\njournal (a write is synced to disk before it is answered); floor: append + fdatasync "
          f"{journal['fsync_floor_p50_ms']:.2f} ms")
    for name in ("speak", "reply"):
        j = journal[name]
        print(f"  {name:<6} on {j['journal_on_p50_ms']:.2f} ms, off {j['journal_off_p50_ms']:.2f} ms: "
              f"{j['cost_per_write_ms']:.2f} ms per write = {j['cost_in_floors']:.2f} floors")
    burst = journal["burst"]
    print(f"  burst: {burst['writers']} writers, {burst['writes']} writes, {burst['writes_per_s']} writes/s, "
          f"{burst['records_per_sync']} writes per sync")
    return 0
