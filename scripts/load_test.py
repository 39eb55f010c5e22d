#!/usr/bin/env python3
"""A bounded load test of a local stage (loopback only; it stops by itself).

Simulated players poll the stage every few seconds with If-None-Match and
reply now and then; agents speak and fetch replies.  When the time is up the
players stop, then the agents drain the unread replies.  The report says
whether anything went wrong: errors (any unexpected status or failed
connection), replies lost (posted but never fetched) or duplicated (fetched
more than once), and per route the throughput and latency p50/p99.

    .venv/bin/python scripts/load_test.py                    # against `make run` (.butai/local.json)
    .venv/bin/python scripts/load_test.py --start --seconds 20 --players 10 --agents 3
    .venv/bin/python scripts/load_test.py --local-json PATH --json

By default it makes a fresh agent stage for the run, so no one else fetches
its replies; `--stage NAME` uses a stage of local.json instead (then nobody
else may fetch from it during the run, or its replies count as lost).
Exit status: 0 when there were no errors, nothing lost and nothing
duplicated; 1 otherwise; 2 for bad arguments or a target that is not local.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
EXPRESSIONS = ["neutral", "smile", "troubled", "surprised", "embarrassed", "determined"]
ROUTES = ("GET /stages/{id}", "POST /stages/{id}/reply", "POST /stages/{id}/speak", "POST /stages/{id}/fetch_replies")
DRAIN_SECONDS = 30.0
START_SECONDS = 90.0


class Refused(Exception):
    """The target or the arguments are not acceptable (exit 2)."""


# ---------------------------------------------------------------- target


def loopback_url(url: str, what: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname != LOOPBACK:
        raise Refused(f"{what} {url!r} is not http://{LOOPBACK}: this load test only talks to a local stage")
    return url.rstrip("/")


class StartedStage:
    """`butai run --port 0` in a temporary state folder, stopped (SIGTERM) and removed at the end."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="butai-load-"))
        self.proc: subprocess.Popen | None = None
        self.log = None

    def start(self) -> dict:
        state = self.folder / "state"
        self.log = open(self.folder / "run.log", "wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "butai_tools.cli", "run", "--port", "0",
                                      "--state-dir", str(state)], cwd=ROOT, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        path = state / "local.json"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"butai run exited with {self.proc.returncode}; see {self.folder / 'run.log'}")
            if path.exists():
                try:
                    info = json.loads(path.read_text(encoding="utf-8"))
                except ValueError:
                    info = {}
                if info.get("pid") == self.proc.pid:
                    return info
            time.sleep(0.1)
        raise RuntimeError("butai run did not start in time")

    def stop(self) -> int | None:
        code = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait(timeout=10)
        elif self.proc is not None:
            code = self.proc.returncode
        if self.log is not None:
            self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        return code


def make_stage(info: dict, name: str) -> dict:
    """A fresh agent stage in the running local stage's storage."""
    sys.path.insert(0, str(ROOT))
    from chalicelib import context
    from chalicelib.config import Settings
    endpoint = loopback_url(info["aws_endpoint"], "aws_endpoint")
    created = context.build(Settings.from_env().with_(aws_endpoint=endpoint)).stage.create_stage(name)
    return {"stage_id": created.stage_id, "agent_key": created.agent_key, "player_key": created.player_key}


# ---------------------------------------------------------------- measuring


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.statuses: dict[str, Counter] = defaultdict(Counter)
        self.errors: dict[str, int] = Counter()
        self.samples: list[str] = []
        self.sent: dict[str, str] = {}                 # reply id -> text
        self.fetched: list[tuple[str, str, str]] = []  # (reply id, text, agent)

    def request(self, api: str, route: str, method: str, path: str, key: str, *, body=None,
                headers=None, expect=(200,)):
        """One request on its own connection; returns (status, headers, parsed body) or None on an error."""
        parts = urllib.parse.urlsplit(api)
        hdrs = {"Authorization": f"Bearer {key}", "Connection": "close", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            hdrs["Content-Type"] = "application/json"
        started = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            try:
                conn.request(method, path, body=data, headers=hdrs)
                response = conn.getresponse()
                raw = response.read()
                status, got_headers = response.status, dict(response.getheaders())
            finally:
                conn.close()
        except (OSError, http.client.HTTPException) as exc:
            self._error(route, f"{route}: {type(exc).__name__}: {exc}")
            return None
        elapsed = (time.perf_counter() - started) * 1000
        with self.lock:
            self.latency[route].append(elapsed)
            self.statuses[route][status] += 1
        if status not in expect:
            self._error(route, f"{route}: {status} {raw[:200].decode('utf-8', 'replace')}")
            return None
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            self._error(route, f"{route}: {status} with a body that is not JSON")
            return None
        return status, got_headers, parsed

    def _error(self, route: str, message: str) -> None:
        with self.lock:
            self.errors[route] += 1
            if len(self.samples) < 10:
                self.samples.append(message)


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 1))))   # nearest rank
    return round(ordered[rank - 1], 2)


# ---------------------------------------------------------------- the simulated people


def player(rec: Recorder, api: str, stage: dict, index: int, args, stop: threading.Event, rng: random.Random):
    path = f"/stages/{stage['stage_id']}"
    etag = None
    seq = 0
    stop.wait(rng.uniform(0, args.poll))                 # players do not all poll at the same moment
    while not stop.is_set():
        tick = time.monotonic()
        got = rec.request(api, ROUTES[0], "GET", path, stage["player_key"],
                          headers={"If-None-Match": etag} if etag else None, expect=(200, 304))
        if got is not None:
            etag = got[1].get("ETag") or etag
        if seq == 0 or rng.random() < args.reply_chance:   # every player replies once, then now and then
            text = f"player {index:03d} reply {seq:05d}"
            got = rec.request(api, ROUTES[1], "POST", f"{path}/reply", stage["player_key"], body={"text": text},
                              expect=(202,))
            if got is not None:
                with rec.lock:
                    rec.sent[got[2]["id"]] = text
            seq += 1
        stop.wait(max(0.0, args.poll - (time.monotonic() - tick)))


def agent(rec: Recorder, api: str, stage: dict, index: int, args, stop: threading.Event, drain: threading.Event,
          rng: random.Random, run_id: str):
    path = f"/stages/{stage['stage_id']}"
    seq = 0
    handled: list[str] = []      # acknowledged by the next fetch, as an agent does once it answered them

    def fetch() -> list | None:
        nonlocal seq, handled
        seq += 1
        body: dict = {"request_id": f"{run_id}-a{index}-f{seq}"}
        if handled:
            body["ack"] = handled[:100]
        got = rec.request(api, ROUTES[3], "POST", f"{path}/fetch_replies", stage["agent_key"], body=body)
        if got is None:
            return None
        handled = handled[100:] + [r["id"] for r in got[2]]
        with rec.lock:
            rec.fetched.extend((r["id"], r["text"], f"agent {index}") for r in got[2])
        return got[2]

    stop.wait(rng.uniform(0, args.agent_interval))
    while not stop.is_set():
        tick = time.monotonic()
        if rng.random() < args.speak_chance:
            seq += 1
            rec.request(api, ROUTES[2], "POST", f"{path}/speak", stage["agent_key"],
                        body={"text": f"agent {index} line {seq}", "expression": rng.choice(EXPRESSIONS),
                              "request_id": f"{run_id}-a{index}-s{seq}"})
        fetch()
        stop.wait(max(0.0, args.agent_interval - (time.monotonic() - tick)))
    # the players have stopped: take what is left, until a fetch comes back empty
    drain.wait(DRAIN_SECONDS)
    deadline = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < deadline:
        got = fetch()
        if got == [] and not handled:
            return
        if got is None:
            time.sleep(0.2)


def run(args) -> dict:
    started = None
    try:
        if args.start:
            started = StartedStage()
            info = started.start()
        else:
            path = Path(args.local_json or os.environ.get("BUTAI_LOCAL_JSON") or ROOT / ".butai" / "local.json")
            if not path.exists():
                raise Refused(f"{path} does not exist: start the local stage (make run) or pass --start")
            info = json.loads(path.read_text(encoding="utf-8"))
        api = loopback_url(info["api_url"], "api_url")
        if args.stage:
            if args.stage not in info.get("stages", {}):
                raise Refused(f"no stage {args.stage!r} in local.json (has: {', '.join(info.get('stages', {}))})")
            stage = info["stages"][args.stage]
        else:
            stage = make_stage(info, time.strftime("load-%Y%m%d-%H%M%S"))
        report = load(api, stage, args)
    finally:
        code = started.stop() if started is not None else None
    if started is not None:
        report["started"] = {"pid": started.proc.pid if started.proc else None, "exit_status": code}
    return report


def load(api: str, stage: dict, args) -> dict:
    rec = Recorder()
    rng = random.Random(args.seed)
    run_id = f"load-{int(time.time())}-{rng.randrange(10**6)}"
    stop, drain = threading.Event(), threading.Event()
    players = [threading.Thread(target=player, args=(rec, api, stage, i, args, stop, random.Random(rng.random())),
                                name=f"player-{i}", daemon=True) for i in range(args.players)]
    agents = [threading.Thread(target=agent, args=(rec, api, stage, i, args, stop, drain, random.Random(rng.random()),
                                                   run_id), name=f"agent-{i}", daemon=True)
              for i in range(args.agents)]
    began = time.monotonic()
    for thread in players + agents:
        thread.start()
    stop.wait(args.seconds)
    stop.set()
    for thread in players:
        thread.join(timeout=60)
    elapsed = time.monotonic() - began
    drain.set()
    for thread in agents:
        thread.join(timeout=DRAIN_SECONDS + 60)
    stuck = [t.name for t in players + agents if t.is_alive()]
    if stuck:
        rec._error("harness", f"threads still running at the end: {', '.join(stuck)}")

    fetched_ids = [r[0] for r in rec.fetched]
    counts = Counter(fetched_ids)
    routes = {}
    for route in ROUTES:
        values = rec.latency.get(route, [])
        routes[route] = {
            "count": len(values), "errors": rec.errors.get(route, 0),
            "per_s": round(len(values) / elapsed, 2) if elapsed else None,
            "p50_ms": percentile(values, 0.50), "p99_ms": percentile(values, 0.99),
            "max_ms": round(max(values), 2) if values else None,
            "statuses": {str(k): v for k, v in sorted(rec.statuses.get(route, {}).items())},
        }
    return {
        "api_url": api, "stage_id": stage["stage_id"],
        "seconds": args.seconds, "elapsed_s": round(elapsed, 2),
        "players": args.players, "agents": args.agents, "poll_s": args.poll,
        "requests": sum(len(v) for v in rec.latency.values()),
        "errors": sum(rec.errors.values()), "error_samples": rec.samples,
        "replies": {
            "sent": len(rec.sent), "fetched": len(fetched_ids), "fetched_unique": len(counts),
            "lost": len(set(rec.sent) - set(counts)),
            "duplicated": sum(n - 1 for n in counts.values() if n > 1),
            "unexpected": len(set(counts) - set(rec.sent)),
            "text_mismatch": sum(1 for rid, text, _ in rec.fetched if rid in rec.sent and rec.sent[rid] != text),
        },
        "routes": routes,
    }


def ok(report: dict) -> bool:
    r = report["replies"]
    return report["errors"] == 0 and r["lost"] == 0 and r["duplicated"] == 0 and r["unexpected"] == 0 \
        and r["text_mismatch"] == 0


def table(report: dict) -> str:
    r = report["replies"]
    lines = [
        f"butai load test: {report['players']} players (poll {report['poll_s']} s), {report['agents']} agents, "
        f"{report['elapsed_s']} s against {report['api_url']} (stage {report['stage_id']})",
        "",
        f"{'route':<34} {'requests':>8} {'errors':>6} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  statuses",
    ]
    for route, row in report["routes"].items():
        statuses = " ".join(f"{k}×{v}" for k, v in row["statuses"].items())
        fmt = lambda v: "-" if v is None else f"{v:.1f}"   # noqa: E731
        lines.append(f"{route:<34} {row['count']:>8} {row['errors']:>6} {fmt(row['per_s']):>7} "
                     f"{fmt(row['p50_ms']):>8} {fmt(row['p99_ms']):>8} {fmt(row['max_ms']):>8}  {statuses}")
    lines += [
        "",
        f"requests {report['requests']}, errors {report['errors']}",
        f"replies: sent {r['sent']}, fetched {r['fetched']}, lost {r['lost']}, duplicated {r['duplicated']}, "
        f"unexpected {r['unexpected']}, text mismatches {r['text_mismatch']}",
        "result: " + ("OK" if ok(report) else "FAILED"),
    ]
    lines += [f"  {s}" for s in report["error_samples"]]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--local-json", metavar="PATH", help="the running stage's local.json "
                        "(default: $BUTAI_LOCAL_JSON or .butai/local.json)")
    target.add_argument("--start", action="store_true", help="start `butai run --port 0` in a temporary folder "
                        "for the run and stop it at the end")
    parser.add_argument("--stage", metavar="NAME", help="use this stage of local.json instead of a fresh one")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long players poll (default 60)")
    parser.add_argument("--players", type=int, default=20, help="simulated players (default 20)")
    parser.add_argument("--agents", type=int, default=5, help="simulated agents (default 5)")
    parser.add_argument("--poll", type=float, default=3.0, help="seconds between a player's polls (default 3)")
    parser.add_argument("--reply-chance", type=float, default=0.2,
                        help="chance that a poll comes with a reply (default 0.2; each player's first poll always)")
    parser.add_argument("--agent-interval", type=float, default=1.0,
                        help="seconds between an agent's rounds of speak + fetch (default 1)")
    parser.add_argument("--speak-chance", type=float, default=0.5, help="chance an agent speaks in a round (0.5)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 3600:
        parser.error("--seconds must be in (0, 3600]")
    if not 0 <= args.players <= 500 or not 1 <= args.agents <= 100:
        parser.error("--players must be 0-500 and --agents 1-100")
    if args.poll <= 0 or args.agent_interval <= 0:
        parser.error("--poll and --agent-interval must be positive")
    if not (0 <= args.reply_chance <= 1 and 0 <= args.speak_chance <= 1):
        parser.error("--reply-chance and --speak-chance must be between 0 and 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        report = run(args)
    except Refused as exc:
        print(f"load_test: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(json.dumps(report, ensure_ascii=False, indent=2) if args.json else table(report))
    return 0 if ok(report) else 1


if __name__ == "__main__":
    sys.exit(main())
