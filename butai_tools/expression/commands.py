"""`butai eval-expression [DATASET]` and `butai bench expression`."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from butai_tools.expression.evaluation import (
    DEFAULT_DATASET,
    DatasetError,
    bench,
    format_report,
    load_dataset,
    run_dataset,
    summarise,
)
from chalicelib.config import Settings
from chalicelib.context import build_models
from chalicelib.expression.judges import JUDGES


def _add_judge_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--judge", choices=JUDGES, default=None,
                        help="expression judge (default: BUTAI_EXPRESSION_JUDGE, else lexicon)")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval-expression", help="measure the expression judge against lines with expected faces",
        description="Judge every line of the data set with its character's own expression keys and print the "
                    "misses, accuracy (overall, per split, per character), unsafe judgments (a feeling turned "
                    "around, like a smile on an apology), the confusion table and latency.")
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATASET), help="data set JSON file")
    _add_judge_options(parser)
    parser.add_argument("--split", default=None, help="only the cases of this split (dev, heldout)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    parser.add_argument("--min-accuracy", type=float, default=None, help="exit 1 when accuracy is lower")
    parser.add_argument("--max-unsafe", type=int, default=None, help="exit 1 when more judgments are unsafe")
    parser.set_defaults(func=run_eval)


def register_bench(bench_subparsers: Any) -> None:
    parser = bench_subparsers.add_parser(
        "expression", help="expression judge: ms per judgment",
        description="Judge every line of the expression data set in rounds and print p50/p99 milliseconds "
                    "per judgment.")
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    _add_judge_options(parser)
    parser.add_argument("--rounds", type=int, default=50, help="passes over the set (default 50)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run_bench)


def _load(args: argparse.Namespace, command: str):
    try:
        dataset = load_dataset(args.dataset)
    except DatasetError as exc:
        print(f"butai {command}: {exc}", file=sys.stderr)
        return None, None
    try:
        settings = Settings.from_env()
        if args.judge:
            settings = settings.with_models(expression_judge=args.judge)
        judge = build_models(settings).judge()
    except (ValueError, TypeError, KeyError) as exc:
        print(f"butai {command}: {exc}", file=sys.stderr)
        return dataset, None
    return dataset, judge


def run_eval(args: argparse.Namespace) -> int:
    dataset, judge = _load(args, "eval-expression")
    if dataset is None or judge is None:
        return 1 if dataset is None else 2
    if args.split:
        dataset = replace(dataset, cases=tuple(c for c in dataset.cases if c.split == args.split))
        if not dataset.cases:
            print(f"butai eval-expression: no case has split {args.split!r}", file=sys.stderr)
            return 2
    results = run_dataset(judge, dataset)
    summary = summarise(results)
    if args.json:
        print(json.dumps({"judge": judge.name, "dataset": args.dataset, **summary,
                          "cases": [r.to_dict() for r in results]}, ensure_ascii=False, indent=1))
    else:
        print(format_report(results, summary, judge.name))
    if args.min_accuracy is not None and summary["accuracy"] < args.min_accuracy:
        return 1
    if args.max_unsafe is not None and summary["unsafe"] > args.max_unsafe:
        return 1
    return 0


def run_bench(args: argparse.Namespace) -> int:
    dataset, judge = _load(args, "bench expression")
    if dataset is None or judge is None:
        return 1 if dataset is None else 2
    figures = bench(judge, dataset, args.rounds)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return 0
    print(f"expression judge ({figures['judge']}), {figures['cases']} lines x {figures['rounds']} rounds: "
          f"p50 {figures['p50_ms']:.4f} ms  p99 {figures['p99_ms']:.4f} ms  max {figures['max_ms']:.4f} ms")
    return 0
