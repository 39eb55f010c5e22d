"""`butai bench answers`: time to choose an authored answer (dialogue act,
knowledge entry, reaction or fallback, and its variation) for one turn of
free conversation on the reference scenario, with no model."""
from __future__ import annotations

import json
import statistics
import time

# Free talk with a topic (knowledge), acts (reactions) and nothing (fallback).
INPUTS = [
    ("意図:音楽", "映画音楽もいいと思うよ"), ("意図:店名と看板", "看板のネオン、切れてたよ"),
    ("意図:赤いドア", "あのドアって何で赤いの？"), ("なし", "こんばんは"), ("なし", "ありがとう"),
    ("なし", "ばーか"), ("なし", "お会計お願いします"), ("なし", "ママはいつからこの店やってるの？"),
    ("なし", "宇宙人っていると思う？"), ("なし", "まあね"),
]


def register_bench(sub) -> None:
    p = sub.add_parser("answers", help="time to choose a knowledge line, reaction or fallback (no model)")
    p.add_argument("--rounds", type=int, default=500, help="rounds over the inputs (default 500)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


def run_bench(rounds: int = 500) -> dict:
    from butai_tools.local.runtime import ROOT
    from chalicelib.answers import Answerer
    from chalicelib.scenario import GameRules, PlayerInput, load_scenario
    rules = GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))
    answerer = Answerer(rules)
    state = rules.start().state
    for opened in ("なし", "意図:音楽"):          # topics open, the music lines used up
        state = rules.handle(PlayerInput.parse(opened), state).state
    steps = [(rules.handle(PlayerInput.parse(i), state), text) for i, text in INPUTS]
    for step, text in steps:                                                    # warm the caches once
        answerer.answer(step.free_talk, state, text)
    times = []
    for _ in range(rounds):
        for step, text in steps:
            start = time.perf_counter()
            said = answerer.answer(step.free_talk, state, text)
            times.append((time.perf_counter() - start) * 1000)
            state = state.with_said(variation=said.variation)     # variation moves on as in play
    times.sort()
    return {"inputs": [t for _, t in INPUTS], "selections": len(times),
            "p50_ms": round(statistics.median(times), 4), "p99_ms": round(times[int(0.99 * (len(times) - 1))], 4),
            "mean_ms": round(statistics.fmean(times), 4)}


def _run(args) -> int:
    result = run_bench(args.rounds)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(f"answers: {result['selections']} selections over {len(result['inputs'])} inputs: "
              f"p50 {result['p50_ms']:.4f} ms  p99 {result['p99_ms']:.4f} ms  mean {result['mean_ms']:.4f} ms")
    return 0
