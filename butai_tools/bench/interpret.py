"""`butai bench interpret`: milliseconds per interpretation (lexical backend).

Every case of the evaluation set is interpreted, in rounds, by the turn-level
entry point (candidates, addressee, narrowing, backend, refinement), once
with variant-aware word matching and once with raw substrings; states are
prepared before timing.  Prints p50/p99 per interpretation for both.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from butai_tools.interpret.evaluation import load_dataset, percentile, run_dataset, summarise
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.scenario import GameRules, load_scenario

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCENARIO = ROOT / "scenarios" / "chinoike.json"
DEFAULT_DATASET = ROOT / "scenarios" / "eval" / "interpret.json"


def register_bench(bench_subparsers: Any) -> None:
    parser = bench_subparsers.add_parser(
        "interpret", help="input interpretation: ms per turn for the lexical backend",
        description="Interpret every case of an evaluation set in rounds with the lexical backend, with and "
                    "without variant-aware word matching, and print p50/p99 milliseconds per interpretation "
                    "(and the accuracy of each mode).")
    parser.add_argument("--scenario", default=str(DEFAULT_SCENARIO))
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--rounds", type=int, default=20, help="passes over the set (default 20)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run_bench)


def bench_interpret(scenario: str | Path = DEFAULT_SCENARIO, dataset: str | Path = DEFAULT_DATASET,
                    rounds: int = 20) -> dict[str, Any]:
    rules = GameRules(load_scenario(scenario))
    cases = load_dataset(dataset, rules)
    states = {}
    for case in cases.cases:
        key = tuple(str(s) for s in case.setup)
        if key not in states:
            step = rules.start()
            for s in case.setup:
                step = rules.handle(s, step.state)
            states[key] = step.state
    figures: dict[str, Any] = {"cases": len(cases.cases), "rounds": rounds}
    for mode, variant in (("variant_words", True), ("plain_words", False)):
        interpreter = Interpreter(rules, variant_words=variant)
        summary = summarise(run_dataset(interpreter, cases))          # also warms every cache
        timings: list[float] = []
        clock = time.perf_counter_ns
        for _ in range(max(1, rounds)):
            for case in cases.cases:
                state = states[tuple(str(s) for s in case.setup)]
                t = clock()
                interpreter.interpret_turn(case.text, state, case.to)
                timings.append((clock() - t) / 1e6)
        # the same with every per-text cache emptied before each turn (a text the process has not seen)
        cold: list[float] = []
        for case in cases.cases:
            state = states[tuple(str(s) for s in case.setup)]
            _forget_texts(interpreter)
            t = clock()
            interpreter.interpret_turn(case.text, state, case.to)
            cold.append((clock() - t) / 1e6)
        figures[mode] = {
            "cold_p50_ms": round(percentile(cold, 0.5), 4), "cold_p99_ms": round(percentile(cold, 0.99), 4),
            "p50_ms": round(percentile(timings, 0.5), 4), "p99_ms": round(percentile(timings, 0.99), 4),
            "max_ms": round(max(timings), 4), "interpretations": len(timings),
            "accuracy": summary["accuracy"], "unsafe": summary["unsafe"], "correct": summary["correct"],
            "narrowed_misses": summary["misses"].get("narrowed", {}).get("count", 0),
        }
    return figures


def _forget_texts(interpreter: Interpreter) -> None:
    from chalicelib.interpret.ja import sudachi
    from chalicelib.interpret.text import reading_of
    sudachi.analyse.cache_clear()
    reading_of.cache_clear()
    if interpreter.related is not None:
        interpreter.related._cache.clear()


def run_bench(args: argparse.Namespace) -> int:
    figures = bench_interpret(args.scenario, args.dataset, args.rounds)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return 0
    print(f"interpretation (lexical), {figures['cases']} cases x {figures['rounds']} rounds")
    for mode in ("variant_words", "plain_words"):
        f = figures[mode]
        print(f"  {mode:<14} p50 {f['p50_ms']:.3f} ms  p99 {f['p99_ms']:.3f} ms  max {f['max_ms']:.3f} ms   "
              f"accuracy {f['correct']}/{figures['cases']} = {f['accuracy']:.3f}  unsafe {f['unsafe']}  "
              f"narrowed misses {f['narrowed_misses']}")
        print(f"  {'':<14} unseen texts (per-text caches emptied): p50 {f['cold_p50_ms']:.3f} ms  "
              f"p99 {f['cold_p99_ms']:.3f} ms")
    return 0
