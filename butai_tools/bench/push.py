"""`butai bench push`: how soon a line an agent speaks is on the player's page — pushed, and polled — in
the same run; and what one push costs (the fan-out's DynamoDB requests and time, by open sockets).

One local runtime in this process (moto on 127.0.0.1, the API and /push on an ephemeral port) and real
headless Chromium at 390×844.  Two pages show the same stage: one subscribed over the push socket, one
whose socket Chromium is made to drop at once (so it polls every 3 s, as it does without a socket).  Each
line is spoken over HTTP at a random moment of the poll cycle; a MutationObserver in each page notes when
the line's text is in the DOM (wall clock, the same machine's), and the figure is from the moment the
speak response was read — and, beside it, from the moment the request was sent.

The fan-out part opens 1, 10, 100 plain socket clients on one stage and speaks lines: each fan-out's time
(its reads, the view, the sends to every socket) is what the write path would add to every `speak` and
`reply` if the writer sent the pushes itself instead of the stream.

`--agents N` measures instead many agents at once: N stages, each with an agent speaking a line every
`--agent-interval` seconds (on average) and a page reading its push socket (a plain socket client speaking
the page's protocol: N Chromium pages would not fit beside the stage on a small machine); the figure is
from the `speak` answer to the page's receipt of the view carrying that line.  The same lines are measured
twice in one run: alone (the floor), and with `--stalled` beside one socket that never reads — it
subscribes to every stage, so that every line is pushed to it too, and then reads nothing, with a receive
buffer of 1 KB.  The agents and the pages run in a process of their own, as they are not the stage's.
"""
from __future__ import annotations

import collections
import json
import os
import random
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from butai_tools import env as tool_env
from butai_tools.bench.stage import _percentile as percentile

POLL_INTERVAL_S = 3.0
CHROMIUM = os.environ.get(tool_env.CHROMIUM, "/usr/bin/chromium")
# Notes the wall-clock moment each new text of the speech bubble is on the page.
OBSERVE = """
window.__seen = {};
new MutationObserver(function () {
  var el = document.getElementById('speech-text');
  if (el && el.textContent && !(el.textContent in window.__seen)) {
    window.__seen[el.textContent] = performance.timeOrigin + performance.now();
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""


def register_bench(sub) -> None:
    p = sub.add_parser("push", help="agent line → player's page: pushed vs polled, and the fan-out's cost")
    p.add_argument("--lines", type=int, default=20, help="lines spoken (default 20)")
    p.add_argument("--sockets", default="1,10,100", help="open sockets for the fan-out figures (default 1,10,100)")
    p.add_argument("--fan-out-lines", type=int, default=10, help="lines per socket count (default 10)")
    p.add_argument("--agents", type=int, default=0,
                   help="measure N agents speaking at once, each with a page (only that part)")
    p.add_argument("--agent-lines", type=int, default=10, help="lines per agent and phase (default 10)")
    p.add_argument("--agent-interval", type=float, default=2.0,
                   help="seconds between an agent's lines, on average (default 2)")
    p.add_argument("--line-chars", type=int, default=0,
                   help="with --agents: pad each line to this many characters (default: a short line)")
    p.add_argument("--stalled", action="store_true",
                   help="with --agents: a second phase beside one socket that never reads")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


def _summary(values: list[float]) -> dict:
    return {"p50_s": round(statistics.median(values), 4), "p90_s": round(percentile(values, 0.9), 4),
            "mean_s": round(statistics.fmean(values), 4), "max_s": round(max(values), 4),
            "min_s": round(min(values), 4)}


def _speak(api: str, stage, text: str) -> tuple[float, float, dict]:
    request = urllib.request.Request(f"{api}/stages/{stage.stage_id}/speak", method="POST",
                                     data=json.dumps({"text": text}).encode(),
                                     headers={"Authorization": f"Bearer {stage.agent_key}",
                                              "Content-Type": "application/json"})
    sent = time.time()
    with urllib.request.urlopen(request, timeout=30) as response:
        body = json.loads(response.read())
    return sent, time.time(), body


class _DynamoCalls:
    """DynamoDB requests made on the fan-out's own thread (botocore's event hooks on the clients it uses)."""

    def __init__(self, *clients):
        self.calls: list[str] = []
        for client in clients:
            client.meta.events.register("before-call.dynamodb", self._note)

    def _note(self, model, **_):
        if threading.current_thread().name.startswith(("push-fan-out", "push_")):
            self.calls.append(model.name)


def _pages(runtime, stage, lines: int, calls: _DynamoCalls) -> dict:
    from playwright.sync_api import sync_playwright
    url = f"{runtime.api_url}/#stage={stage.stage_id}&key={stage.player_key}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            pages, requests = {}, collections.Counter()
            for name in ("push", "polling"):
                context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
                context.add_init_script(OBSERVE)
                page = context.new_page()
                page.on("request", lambda req, name=name: requests.update(
                    [name] if req.method == "GET" and "/stages/" in req.url else []))
                if name == "polling":
                    # The socket drops as soon as it opens: the page polls, as it does without one.
                    page.route_web_socket("**/push", lambda ws: ws.close())
                page.goto(url)
                page.wait_for_selector("body[data-state=ready]", timeout=30000)
                pages[name] = page
            _wait(lambda: pages["push"].evaluate("document.body.dataset.push") == "live", 30)
            latencies: dict[str, dict[str, list[float]]] = {name: {"response": [], "request": []} for name in pages}
            started = time.monotonic()
            counted_from = dict(requests)
            calls_from, fan_outs_from = len(calls.calls), len(runtime.push.fan_outs)
            for i in range(lines):
                # Anywhere in the poll cycle.
                time.sleep(random.uniform(0.2, POLL_INTERVAL_S + 0.2))
                text = f"計測の台詞 {i + 1:02d}"
                sent, answered, _ = _speak(runtime.api_url, stage, text)
                for name, page in pages.items():
                    _wait(lambda p=page, t=json.dumps(text): p.evaluate(f"() => {t} in window.__seen"), 15)
                    seen = page.evaluate(f"() => window.__seen[{json.dumps(text)}]") / 1000
                    latencies[name]["response"].append(seen - answered)
                    latencies[name]["request"].append(seen - sent)
            minutes = (time.monotonic() - started) / 60
            per_minute = {name: round((requests[name] - counted_from.get(name, 0)) / minutes, 1) for name in pages}
            still_live = pages["push"].evaluate("document.body.dataset.push") == "live"
            # A page sees the line while its fan-out is still sending; the fan-out is recorded only after. Count
            # calls and fan-outs once every line's fan-out is recorded, or a busy machine splits one between them.
            _wait(lambda: len(runtime.push.fan_outs) - fan_outs_from >= lines, 30)
            fan_outs = len(runtime.push.fan_outs) - fan_outs_from
            per_fan_out = {op: round(n / max(1, fan_outs), 2)
                           for op, n in collections.Counter(calls.calls[calls_from:]).items()}
        finally:
            browser.close()
    return {"latencies": latencies, "get_requests_per_page_minute": per_minute, "push_stayed_live": still_live,
            "fan_outs": fan_outs, "dynamodb_requests_per_fan_out": per_fan_out}


def _wait(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.005)


def _fan_out(runtime, counts: list[int], lines: int) -> dict:
    from websockets.sync.client import connect
    push_url = runtime.api_url.replace("http://", "ws://") + "/push"
    out = {}
    for count in counts:
        stage = runtime.stage_service.create_stage(f"fan-out-{count}")
        sockets = []
        try:
            for _ in range(count):
                ws = connect(push_url, open_timeout=30, max_size=None)
                ws.send(json.dumps({"action": "subscribe", "stage": stage.stage_id, "key": stage.player_key}))
                assert json.loads(ws.recv(timeout=30))["type"] == "subscribed"
                sockets.append(ws)
            done_before = len(runtime.push.fan_outs)
            speak_ms = []
            for i in range(lines):
                sent, answered, _ = _speak(runtime.api_url, stage, f"{count} 人への台詞 {i}")
                speak_ms.append((answered - sent) * 1000)
                for ws in sockets:
                    ws.recv(timeout=30)
            _wait(lambda n=done_before + lines: len(runtime.push.fan_outs) >= n, 30)
            took = [seconds * 1000 for stage_id, seconds, done in list(runtime.push.fan_outs)[done_before:]
                    if stage_id == stage.stage_id and done.sent == count]
            out[str(count)] = {"fan_out_p50_ms": round(statistics.median(took), 2),
                               "fan_out_max_ms": round(max(took), 2),
                               "speak_p50_ms": round(statistics.median(speak_ms), 2), "fan_outs": len(took)}
        finally:
            for ws in sockets:
                ws.close()
    return out


def _tail(values: list[float]) -> dict:
    return {"p50_s": round(statistics.median(values), 4), "p90_s": round(percentile(values, 0.9), 4),
            "p99_s": round(percentile(values, 0.99), 4), "max_s": round(max(values), 4), "lines": len(values)}


class _Page:
    """A page's push socket: subscribes, then notes when each view arrives (by its version)."""

    def __init__(self, url: str, stage):
        from websockets.sync.client import connect
        self.ws = connect(url, open_timeout=30, max_size=None)
        self.ws.send(json.dumps({"action": "subscribe", "stage": stage.stage_id, "key": stage.player_key}))
        assert json.loads(self.ws.recv(timeout=30))["type"] == "subscribed"
        self.seen: dict[str, float] = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed
        try:
            while True:
                message = json.loads(self.ws.recv())
                if message.get("type") == "view":
                    with self.cond:
                        self.seen[message["view"]["version"]] = time.monotonic()
                        self.cond.notify_all()
        except (ConnectionClosed, OSError, ValueError):
            pass

    def when(self, version: str, timeout: float) -> float | None:
        with self.cond:
            self.cond.wait_for(lambda: version in self.seen, timeout)
            return self.seen.get(version)


class _Stalled:
    """One socket that subscribes to every stage and never reads, for the whole phase.  (Dropped, it does not
    learn of it: the stage's close waits behind the data it never read.)"""

    def __init__(self, api: str, stages):
        self.api, self.stages = api, stages
        self.connects = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> _Stalled:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _connect(self):
        import base64
        import socket
        import urllib.parse
        parts = urllib.parse.urlsplit(self.api)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.settimeout(30)
        sock.connect((parts.hostname, parts.port))
        sock.sendall(b"GET /push HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)) + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(1)
        for stage in self.stages:
            payload = json.dumps({"action": "subscribe", "stage": stage.stage_id, "key": stage.player_key}).encode()
            mask = os.urandom(4)
            sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask
                         + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        self.connects += 1
        return sock

    def _run(self) -> None:
        sock = self._connect()
        try:
            self._stop.wait()            # reads nothing meanwhile
        finally:
            sock.close()


def _phase(api: str, stages: list[dict], lines: int, interval: float, label: str, stalled: bool,
           chars: int = 0) -> dict:
    """One phase of --agents, in a process of its own (as agents and pages are not the stage's process):
    every agent speaks ``lines`` lines, its page notes each view."""
    from types import SimpleNamespace
    stages = [SimpleNamespace(**stage) for stage in stages]
    url = api.replace("http://", "ws://") + "/push"
    pages = [_Page(url, stage) for stage in stages]
    attacker = _Stalled(api, stages).start() if stalled else None
    if attacker is not None:
        time.sleep(1.0)
    latencies: list[float] = []
    missing = [0]
    lock = threading.Lock()

    def agent(n: int) -> None:
        rng = random.Random(f"{label}{n}")
        time.sleep(rng.uniform(0, interval))
        for i in range(lines):
            text = f"{label} {n} の台詞 {i}"
            _, _, body = _speak(api, stages[n], text + "あ" * max(0, chars - len(text)))
            answered = time.monotonic()
            got = pages[n].when(body["version"], 15)
            with lock:
                if got is None:
                    missing[0] += 1
                else:
                    latencies.append(max(0.0, got - answered))
            time.sleep(rng.uniform(0.5, 1.5) * interval)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(len(stages))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if attacker is not None:
        attacker.stop()
    for page in pages:
        page.ws.close()
    return {"latencies": latencies, "missing": missing[0],
            "attacker_connects": attacker.connects if attacker is not None else 0}


def _agents(runtime, count: int, lines: int, interval: float, stalled: bool, chars: int = 0) -> dict:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    stages = [runtime.stage_service.create_stage(f"agent-{n}") for n in range(count)]
    plain = [{"stage_id": s.stage_id, "agent_key": s.agent_key, "player_key": s.player_key} for s in stages]
    report: dict = {"agents": count, "lines_per_agent": lines, "interval_s": interval, "line_chars": chars}
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        for label in ("floor", "stalled") if stalled else ("floor",):
            dropped_before = getattr(runtime.push.sockets, "dropped", 0)
            done = pool.submit(_phase, runtime.api_url, plain, lines, interval, label, label == "stalled",
                               chars).result()
            report[label] = {**_tail(done["latencies"]), "missing": done["missing"]}
            if label == "stalled":
                report[label].update(attacker_connects=done["attacker_connects"],
                                     dropped=getattr(runtime.push.sockets, "dropped", 0) - dropped_before)
    if stalled:
        report["stalled_vs_floor_p50"] = round(report["stalled"]["p50_s"] / max(report["floor"]["p50_s"], 1e-4), 2)
        report["stalled_vs_floor_p99"] = round(report["stalled"]["p99_s"] / max(report["floor"]["p99_s"], 1e-4), 2)
    return report


def run_agents(count: int, lines: int, interval: float, stalled: bool, chars: int = 0) -> dict:
    from butai_tools.local.runtime import LocalRuntime
    with tempfile.TemporaryDirectory() as tmp:
        runtime = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, scenario_stages={},
                               saver_interval=3600, rate=0)
        runtime.start()
        try:
            return {"many_agents": _agents(runtime, count, lines, interval, stalled, chars)}
        finally:
            runtime.stop()


def run_bench(lines: int, sockets: list[int], fan_out_lines: int) -> dict:
    from butai_tools.local.runtime import LocalRuntime
    with tempfile.TemporaryDirectory() as tmp:
        runtime = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, scenario_stages={},
                               saver_interval=3600, rate=0)
        runtime.start()
        try:
            calls = _DynamoCalls(runtime.push_service.stages.store._db)
            stage = runtime.stage_service.create_stage("bench-push")
            seen = _pages(runtime, stage, lines, calls)
            report = {
                "lines": lines, "poll_interval_s": POLL_INTERVAL_S,
                "push": {"from_response": _summary(seen["latencies"]["push"]["response"]),
                         "from_request": _summary(seen["latencies"]["push"]["request"])},
                "polling": {"from_response": _summary(seen["latencies"]["polling"]["response"]),
                            "from_request": _summary(seen["latencies"]["polling"]["request"])},
                "get_requests_per_page_minute": seen["get_requests_per_page_minute"],
                "push_stayed_live": seen["push_stayed_live"],
                "fan_out": {
                    "fan_outs": seen["fan_outs"],
                    # GetItem is the local run's read of the stage: the cloud's stream record carries it.
                    "dynamodb_requests_per_fan_out": seen["dynamodb_requests_per_fan_out"],
                    "by_open_sockets": _fan_out(runtime, sockets, fan_out_lines),
                },
            }
            report["push_vs_polling_p50"] = round(
                report["polling"]["from_response"]["p50_s"] / max(report["push"]["from_response"]["p50_s"], 1e-4), 1)
            return report
        finally:
            runtime.stop()


def _run(args) -> int:
    if args.agents > 0:
        report = run_agents(args.agents, args.agent_lines, args.agent_interval, args.stalled, args.line_chars)
        if args.json:
            print(json.dumps(report, ensure_ascii=False, indent=2))
            return 0
        many = report["many_agents"]
        print(f"butai bench push --agents {many['agents']}: {many['lines_per_agent']} lines per agent and phase, "
              f"one every {many['interval_s']:g} s on average; speak answer -> the view on the agent's page")
        for phase in ("floor", "stalled"):
            if phase in many:
                r = many[phase]
                extra = (f"; the stalled socket connected {r['attacker_connects']} times, dropped {r['dropped']}"
                         if phase == "stalled" else "")
                print(f"  {phase:<8} p50 {r['p50_s']:.3f} s  p90 {r['p90_s']:.3f}  p99 {r['p99_s']:.3f}  "
                      f"max {r['max_s']:.3f}  ({r['lines']} lines, {r['missing']} missing){extra}")
        return 0
    report = run_bench(args.lines, [int(n) for n in args.sockets.split(",") if n.strip()], args.fan_out_lines)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"butai bench push: {report['lines']} lines spoken over HTTP, two pages at 390x844 in Chromium, "
          f"local stack; polling every {report['poll_interval_s']:g} s")
    print(f"{'path':<9} {'from':<9} {'p50 s':>8} {'p90 s':>8} {'max s':>8}")
    for path in ("push", "polling"):
        for start in ("response", "request"):
            r = report[path][f"from_{start}"]
            print(f"{path:<9} {start:<9} {r['p50_s']:>8.3f} {r['p90_s']:>8.3f} {r['max_s']:>8.3f}")
    print(f"GET requests per page-minute: {report['get_requests_per_page_minute']}")
    fan = report["fan_out"]
    print(f"DynamoDB requests per fan-out: {fan['dynamodb_requests_per_fan_out']} ({fan['fan_outs']} fan-outs)")
    for count, r in fan["by_open_sockets"].items():
        print(f"  {count:>4} sockets: fan-out p50 {r['fan_out_p50_ms']:.1f} ms (max {r['fan_out_max_ms']:.1f}), "
              f"speak p50 {r['speak_p50_ms']:.1f} ms")
    return 0
