"""`butai bench rules`: load time and per-step cost of the rule engine at scale.

The walk is a long random game on a synthetic scenario.  Costs are reported
for the first and last tenth of the walk as well as overall: the rules are
meant to cost the same per step however many lines have been shown.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

from butai_tools.scenario.synthetic import synthetic_scenario
from chalicelib.scenario.inputs import NONE
from chalicelib.scenario.loader import load_scenario_text
from chalicelib.scenario.rules import GameRules


def register_bench(bench_subparsers: Any) -> None:
    parser = bench_subparsers.add_parser(
        "rules", help="scenario rule engine: load time, candidates and handle per step",
        description="Generate a synthetic scenario in memory, load it, and time candidates "
                    "(input_candidates + answered_intents) and handle over a long random walk.")
    parser.add_argument("--intents", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=10000)
    parser.add_argument("--places", type=int, default=50)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run_bench)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _summary(values_ms: list[float]) -> dict[str, float]:
    tenth = max(1, len(values_ms) // 10)
    return {
        "p50_ms": statistics.median(values_ms) if values_ms else 0.0,
        "p99_ms": _percentile(values_ms, 0.99),
        "first_tenth_p50_ms": statistics.median(values_ms[:tenth]) if values_ms else 0.0,
        "last_tenth_p50_ms": statistics.median(values_ms[-tenth:]) if values_ms else 0.0,
    }


def bench_rules(intents: int = 1000, lines: int = 10000, places: int = 50, steps: int = 5000,
                seed: int = 0) -> dict[str, Any]:
    text = json.dumps(synthetic_scenario(intents, lines, places, seed), ensure_ascii=False)
    t0 = time.perf_counter()
    compiled = load_scenario_text(text, source="<synthetic>")
    rules = GameRules(compiled)
    load_ms = (time.perf_counter() - t0) * 1000

    rng = random.Random(seed)
    clock = time.perf_counter_ns
    candidates_ms: list[float] = []
    handle_ms: list[float] = []
    step = rules.start()
    state = step.state
    shown_first_tenth = None
    tenth = max(1, steps // 10)
    for i in range(steps):
        t = clock()
        inputs, answered = rules.candidates_split(state)
        candidates_ms.append((clock() - t) / 1e6)
        # Mostly what a player would pick: a topic that moves the story on.
        roll = rng.random()
        topics = [c for c in inputs if c.is_intent]
        if topics and roll < 0.6:
            choice = rng.choice(topics)
        elif roll < 0.7:
            choice = NONE
        else:
            choice = rng.choice(inputs + answered)
        t = clock()
        step = rules.handle(choice, state)
        handle_ms.append((clock() - t) / 1e6)
        state = step.state
        if i == tenth - 1:
            shown_first_tenth = state.shown_count
    return {
        "intents": intents, "lines": lines, "places": places, "steps": steps, "seed": seed,
        "load_ms": load_ms,
        "candidates": _summary(candidates_ms),
        "handle": _summary(handle_ms),
        "lines_shown_after_first_tenth": shown_first_tenth or 0,
        "lines_shown_at_end": state.shown_count,
    }


def format_table(result: dict[str, Any]) -> str:
    rows = [
        f"rules benchmark: {result['intents']} intents, {result['lines']} lines, {result['places']} places, "
        f"{result['steps']} steps (seed {result['seed']})",
        f"load (parse + validate + compile + index): {result['load_ms']:.1f} ms",
        "",
        f"{'per step':<34}{'p50':>10}{'p99':>10}{'first 10% p50':>16}{'last 10% p50':>15}",
    ]
    for label, key in (("input_candidates + answered_intents", "candidates"), ("handle", "handle")):
        s = result[key]
        rows.append(f"{label:<34}{s['p50_ms']:>8.3f}ms{s['p99_ms']:>8.3f}ms{s['first_tenth_p50_ms']:>14.3f}ms"
                    f"{s['last_tenth_p50_ms']:>13.3f}ms")
    rows.append("")
    rows.append(f"lines shown: {result['lines_shown_after_first_tenth']} after the first tenth, "
                f"{result['lines_shown_at_end']} at the end")
    return "\n".join(rows)


def run_bench(args: argparse.Namespace) -> int:
    if args.intents < 1 or args.places < 1 or args.lines < 0 or args.steps < 1:
        print("butai bench rules: error: --intents, --places and --steps must be at least 1, --lines at least 0")
        return 2
    result = bench_rules(args.intents, args.lines, args.places, args.steps, args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(format_table(result))
    return 0
