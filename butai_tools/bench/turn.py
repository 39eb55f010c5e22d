"""`butai bench turn`: reply-to-result latency of a scenario stage on the local run.

The local runtime runs in this process with the embedded `lexical`
classifier and no generation model; a player plays sessions of the reference
scenario over real HTTP (each reply returns the turn's result), and the
DynamoDB requests of each turn are counted with botocore's event hooks.
"""
from __future__ import annotations

import collections
import json
import statistics
import tempfile
import time
from pathlib import Path

from butai_tools.bench.stage import _Http, _percentile
from chalicelib.stage.tails import LogTails

# One play session: greetings, topics, a move, leaving, coming back, small talk.
SESSION = [
    ("こんばんは", None), ("流す曲を変えてみたら？", None), ("おつまみは何がおすすめ？", None),
    ("葵はどう思う？", "神楽坂葵"), ("この店の名前、ちょっと怖くない？", None), ("今のままでいいと思うな", None),
    ("前に借りたお金のこと、話したいんだ", None), ("うん、行ってみよう", None), ("写真、見せてよ", None),
    ("お邪魔しました", None), ("MOVE:店内", None), ("ありがとう、また来るね", None),
]


def register_bench(sub) -> None:
    p = sub.add_parser("turn", help="reply-to-result latency of a scenario stage (lexical classifier)")
    p.add_argument("--sessions", type=int, default=20, help="play sessions of 12 turns (default 20)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


def run_bench(sessions: int) -> dict:
    from butai_tools.local.runtime import ROOT, LocalRuntime
    with tempfile.TemporaryDirectory() as tmp:
        runtime = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, scenario_stages={},
                               saver_interval=3600, rate=0)
        runtime.start()
        try:
            director = runtime.services.director
            created = director.create("bench", director.library.put(ROOT / "scenarios" / "chinoike.json"))
            return _drive(runtime, created, sessions)
        finally:
            runtime.stop()


def _drive(runtime, stage, sessions: int) -> dict:
    calls: list[str] = []
    runtime.stage_service.store._db.meta.events.register(
        "before-call.dynamodb", lambda model, **_: calls.append(model.name))
    http = _Http(runtime.api_url)
    path = f"/stages/{stage.stage_id}/reply"
    director = runtime.services.director
    # The first turn loads the scenario and the classifier's indexes; measured separately.
    calls.clear()
    start = time.perf_counter()
    http("POST", path, stage.player_key, {"text": "こんばんは"})
    first_ms = (time.perf_counter() - start) * 1000
    first_calls = list(calls)

    def play(sessions: int, forget: bool) -> dict:
        times, counts, kinds = [], [], collections.Counter()
        for _ in range(sessions):
            director.reset(stage.stage_id)
            for text, to in SESSION:
                body = {"text": text}
                if text.startswith("MOVE:"):
                    body = {"text": "店内へ行く", "move": text.removeprefix("MOVE:")}
                if to:
                    body["to"] = to
                if forget:
                    director.stages.log_tails = LogTails()     # as another instance: it holds no log
                calls.clear()
                start = time.perf_counter()
                status, _, raw = http("POST", path, stage.player_key, body)
                times.append((time.perf_counter() - start) * 1000)
                if status != 202:
                    raise RuntimeError(f"turn failed: {status} {raw[:200]!r}")
                counts.append(len(calls))
                kinds.update(calls)
                json.loads(raw)["view"]["scene"]
        turns = len(times)
        return {"turns": turns, "p50_ms": round(statistics.median(times), 2),
                "p99_ms": round(_percentile(times, 0.99), 2),
                "dynamodb_requests": statistics.median(counts), "max_dynamodb_requests": max(counts),
                "calls": {k: round(v / turns, 2) for k, v in kinds.items()}}

    # Side by side: turns of a process that holds the stage's log (its own last turn), and turns that have to
    # read it (another Lambda instance answered the last turn, or a line was spoken since).
    remembered = play(sessions, forget=False)
    unknown = play(max(2, sessions // 4), forget=True)
    return {**remembered, "first_turn_ms": round(first_ms, 1), "first_turn_calls": first_calls,
            "log_not_held": unknown}


def _run(args) -> int:
    report = run_bench(args.sessions)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"butai bench turn: {report['turns']} turns ({args.sessions} sessions of {len(SESSION)}), "
          "local stack, lexical classifier, fallback lines")
    for label, r in (("log held by the process", report), ("log read (not held)", report["log_not_held"])):
        print(f"{label:<24} reply-to-result p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms; DynamoDB requests "
              f"per turn: median {r['dynamodb_requests']:g}, max {r['max_dynamodb_requests']} ("
              + ", ".join(f"{k} {v:g}" for k, v in r["calls"].items()) + ")")
    print(f"first turn of a process {report['first_turn_ms']:.0f} ms: " + ", ".join(report["first_turn_calls"]))
    return 0
