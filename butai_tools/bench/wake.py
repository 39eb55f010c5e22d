"""`butai bench wake`: how soon an agent learns of a reply — polling, long-poll, webhook — side by side.

One local runtime in this process (moto on 127.0.0.1, the API on an ephemeral
port).  For each path an agent waits the way that path waits, over real HTTP:

- polling: today's loop, `fetch_replies` every 2 s (``wait_for_replies(long_poll=False)``);
- long-poll: `fetch_replies` with ``wait=20``, again and again;
- webhook: a receiver on 127.0.0.1 that verifies each delivery's signature.

A trial sends one player reply over HTTP at a random moment and measures from
just before the request to the moment the agent holds the reply (the poll or
long-poll returned it; the receiver verified it).  Then, with no replies, each
agent's requests are counted for ``--idle`` seconds: requests per idle hour.

Last, the webhook path again while ``--slow`` other stages have slowloris
receivers (a byte every 3 s, as long as they are let), each with replies
queued: how much later the healthy stage's deliveries come than the webhook
path's own in the same run (the floor).
"""
from __future__ import annotations

import json
import random
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from butai_tools.bench.stage import _percentile as percentile

POLL_INTERVAL_S = 2.0


def register_bench(sub) -> None:
    p = sub.add_parser("wake", help="reply → agent wake-up latency: polling vs long-poll vs webhook")
    p.add_argument("--trials", type=int, default=20, help="replies per path (default 20)")
    p.add_argument("--idle", type=float, default=45.0, help="seconds of idle counting per path (default 45)")
    p.add_argument("--slow", type=int, default=6, help="stages with slowloris receivers beside a healthy one "
                                                        "(default 6; 0 skips it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


class _Agent:
    """One waiting agent: a thread that fetches the way its path does and notes when it got each reply."""

    def __init__(self, stage, long_poll: bool):
        self.stage = stage
        self.long_poll = long_poll
        self.requests: list[float] = []        # start time of every request
        self.got = threading.Condition()
        self.received: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            self.requests.append(time.perf_counter())
            replies = self.stage.fetch_replies(wait=20) if self.long_poll else self.stage.fetch_replies()
            now = time.perf_counter()
            with self.got:
                for r in replies:
                    self.received[r.text] = now
                self.got.notify_all()
            if not self.long_poll:
                self._stop.wait(POLL_INTERVAL_S)

    def wait_for(self, text: str, timeout: float = 30) -> float:
        with self.got:
            if not self.got.wait_for(lambda: text in self.received, timeout):
                raise RuntimeError(f"the agent never got {text!r}")
            return self.received[text]

    def stop(self):
        self._stop.set()


class _Receiver:
    def __init__(self):
        self.secret = ""
        self.requests: list[float] = []
        self.got = threading.Condition()
        self.received: dict[str, float] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                from butai.client import verify_webhook
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                payload = verify_webhook(owner.secret, self.headers, body)
                now = time.perf_counter()
                self.send_response(204)
                self.end_headers()
                with owner.got:
                    owner.requests.append(now)
                    if payload.get("reply"):
                        owner.received[payload["reply"]["text"]] = now
                    owner.got.notify_all()

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/hook"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def wait_for(self, text: str, timeout: float = 30) -> float:
        with self.got:
            if not self.got.wait_for(lambda: text in self.received, timeout):
                raise RuntimeError(f"the webhook never delivered {text!r}")
            return self.received[text]


def _per_hour(starts: list[float], window_start: float, window: float) -> float:
    """Requests per hour from the requests started inside the idle window (interval between them)."""
    inside = [t for t in starts if t >= window_start]
    if len(inside) >= 2:
        return round(3600 * (len(inside) - 1) / (inside[-1] - inside[0]), 1)
    return round(3600 * len(inside) / window, 1)


def run_bench(trials: int, idle: float, slow: int = 0) -> dict:
    from butai.client import Stage
    from butai_tools.local.runtime import LocalRuntime
    from chalicelib.stage.waiting import MAX_WAIT_S, BackoffPolling

    with tempfile.TemporaryDirectory() as tmp:
        runtime = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, scenario_stages={},
                               saver_interval=3600, rate=0)
        runtime.start()
        try:
            paths = {}
            for name in ("polling", "long-poll", "webhook"):
                created = runtime.stage_service.create_stage(f"wake-{name}")
                agent_stage = Stage(runtime.api_url, created.stage_id, created.agent_key, timeout=30)
                player = _Player(runtime.api_url, created.stage_id, created.player_key)
                if name == "webhook":
                    waiter = _Receiver()
                    waiter.secret = agent_stage.set_webhook(waiter.url).secret
                else:
                    waiter = _Agent(agent_stage, long_poll=(name == "long-poll")).start()
                player.send("warm")
                waiter.wait_for("warm")
                latencies = []
                for i in range(trials):
                    # A random moment: anywhere in the poll cycle, and long after the long-poll began.
                    time.sleep(random.uniform(0.2, POLL_INTERVAL_S + 0.2))
                    text = f"{name}-{i}"
                    sent = time.perf_counter()
                    player.send(text)
                    latencies.append(waiter.wait_for(text) - sent)
                window_start = time.perf_counter()
                time.sleep(idle)
                starts = waiter.requests
                if isinstance(waiter, _Agent):
                    waiter.stop()
                else:
                    waiter.http.shutdown()
                paths[name] = {
                    "p50_s": round(statistics.median(latencies), 4),
                    "p99_s": round(percentile(latencies, 0.99), 4),
                    "mean_s": round(statistics.fmean(latencies), 4),
                    "max_s": round(max(latencies), 4),
                    "requests_per_idle_hour": _per_hour(starts, window_start, idle),
                }
            lambda_wait = BackoffPolling()
            neighbours = _slow_neighbours(runtime, trials, slow, paths["webhook"]) if slow else None
            return {"trials": trials, "idle_window_s": idle, "poll_interval_s": POLL_INTERVAL_S,
                    "long_poll_wait_s": MAX_WAIT_S, "paths": paths, "slow_neighbours": neighbours,
                    "lambda_long_poll": {
                        "queries_per_empty_wait": lambda_wait.queries_per_wait(MAX_WAIT_S),
                        "backoff": f"{lambda_wait.first} s doubling to {lambda_wait.cap} s"}}
        finally:
            runtime.stop()


def _slow_neighbours(runtime, trials: int, slow: int, floor: dict) -> dict:
    """Webhook latency of a healthy stage while ``slow`` stages' receivers dribble a byte every 3 s."""
    from butai.client import Stage
    from butai_tools.bench.slow_receivers import SlowLoris
    receivers = [SlowLoris(pause=3.0) for _ in range(slow)]
    try:
        for i, receiver in enumerate(receivers):
            created = runtime.stage_service.create_stage(f"slow-{i}")
            Stage(runtime.api_url, created.stage_id, created.agent_key, timeout=30).set_webhook(receiver.url)
            player = _Player(runtime.api_url, created.stage_id, created.player_key)
            for text in ("一", "二", "三"):
                player.send(text)            # one attempt held, two waiting behind it, for each slow stage
        for receiver in receivers:
            receiver.wait_for_connections(1)
        created = runtime.stage_service.create_stage("healthy")
        healthy = _Receiver()
        healthy.secret = Stage(runtime.api_url, created.stage_id, created.agent_key, timeout=30).set_webhook(
            healthy.url).secret
        player = _Player(runtime.api_url, created.stage_id, created.player_key)
        latencies = []
        for i in range(trials):
            time.sleep(random.uniform(0.2, 1.0))
            text = f"healthy-{i}"
            sent = time.perf_counter()
            player.send(text)
            latencies.append(healthy.wait_for(text) - sent)
        healthy.http.shutdown()
        held = sum(r.open_connections() for r in receivers)
        p50 = statistics.median(latencies)
        return {"slow_stages": slow, "slow_attempts_open_at_the_end": held, "p50_s": round(p50, 4),
                "max_s": round(max(latencies), 4), "delay_p50_s": round(p50 - floor["p50_s"], 4),
                "delay_max_s": round(max(latencies) - floor["p50_s"], 4)}
    finally:
        for receiver in receivers:
            receiver.close()


class _Player:
    """The player's side: `reply` over HTTP, as the stage page sends it."""

    def __init__(self, api: str, stage_id: str, key: str):
        import urllib.request
        self._request = lambda text: urllib.request.Request(
            f"{api}/stages/{stage_id}/reply", method="POST",
            data=json.dumps({"text": text}).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})

    def send(self, text: str) -> None:
        import urllib.request
        with urllib.request.urlopen(self._request(text), timeout=30) as response:
            response.read()


def _run(args) -> int:
    report = run_bench(args.trials, args.idle, args.slow)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"butai bench wake: {report['trials']} replies per path, local stack, over HTTP; idle requests "
          f"counted for {report['idle_window_s']:g} s")
    print(f"{'path':<12} {'p50 s':>8} {'p99 s':>8} {'mean s':>8} {'max s':>8} {'requests/idle hour':>19}")
    for name, r in report["paths"].items():
        print(f"{name:<12} {r['p50_s']:>8.3f} {r['p99_s']:>8.3f} {r['mean_s']:>8.3f} {r['max_s']:>8.3f} "
              f"{r['requests_per_idle_hour']:>19g}")
    lp = report["lambda_long_poll"]
    print(f"in Lambda a long-poll re-queries ({lp['backoff']}): {lp['queries_per_empty_wait']} queries per "
          f"empty {report['long_poll_wait_s']:g} s wait")
    slow = report["slow_neighbours"]
    if slow:
        print(f"webhook beside {slow['slow_stages']} stages with slowloris receivers: p50 {slow['p50_s']:.3f} s, "
              f"max {slow['max_s']:.3f} s; later than the webhook path's p50 by {slow['delay_p50_s']:.3f} s "
              f"(p50), {slow['delay_max_s']:.3f} s (max)")
    return 0
