"""`butai eval-acts SCENARIO DATASET [--split S] [--json]`: the dialogue-act
recogniser against a set of cases, in eval-interpret's style (per-case table,
accuracy overall and per split, precision / recall per act, confusions).

A dataset is ``{"scenario", "cases": [{"id", "split", "text", "expect"}]}``;
``expect`` is one act (see `scenario.model.ACTS`) or なし, or a list of them.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from butai_tools.interpret.evaluation import DatasetError, _cut, label_tables, percentile, read_json
from chalicelib.interpret.acts import NO_ACT, ActRecogniser
from chalicelib.interpret.cues import SceneNames
from chalicelib.scenario import ScenarioError, load_scenario
from chalicelib.scenario.model import ACTS

LABELS = (*ACTS, NO_ACT)


@dataclass(frozen=True)
class ActCase:
    id: str
    text: str
    expect: tuple[str, ...]
    split: str | None = None


@dataclass
class ActResult:
    case: ActCase
    got: str
    cue: str | None
    ms: float

    @property
    def correct(self) -> bool:
        return self.got in self.case.expect


def load_act_cases(path: str | Path) -> list[ActCase]:
    source = str(path)
    data = read_json(path, DatasetError)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise DatasetError(f'{source}: expected an object with a "cases" list')
    cases, problems, seen = [], [], set()
    for index, raw in enumerate(data["cases"]):
        case_id = str(raw.get("id") or f"#{index + 1}") if isinstance(raw, dict) else f"#{index + 1}"
        if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
            problems.append(f'{source}:case {case_id}: expected an object with a non-empty "text"')
            continue
        expect = raw.get("expect")
        expect = tuple(expect) if isinstance(expect, list) else (expect,)
        unknown = [e for e in expect if e not in LABELS]
        if unknown or not expect:
            problems.append(f'{source}:case {case_id}: unknown act {unknown[0] if unknown else None!r} in "expect"; '
                            f'expected one of {", ".join(LABELS)}')
            continue
        if case_id in seen:
            problems.append(f"{source}:case {case_id}: duplicate id")
        seen.add(case_id)
        cases.append(ActCase(case_id, raw["text"], expect, raw.get("split")))
    if problems:
        raise DatasetError("\n".join(problems))
    return cases


def run_act_cases(recogniser: ActRecogniser, cases: list[ActCase]) -> list[ActResult]:
    results = []
    for case in cases:
        start = time.perf_counter()
        found = recogniser.recognise(case.text)
        results.append(ActResult(case, found.act, found.cue, (time.perf_counter() - start) * 1000))
    return results


def summarise_acts(results: list[ActResult]) -> dict[str, Any]:
    total = len(results)
    correct = sum(r.correct for r in results)
    splits: dict[str, dict[str, Any]] = {}
    for r in results:
        entry = splits.setdefault(r.case.split or "-", {"total": 0, "correct": 0})
        entry["total"] += 1
        entry["correct"] += r.correct
    for entry in splits.values():
        entry["accuracy"] = round(entry["correct"] / entry["total"], 4)
    per_act = {}
    for label in LABELS:
        tp = sum(1 for r in results if r.got == label and r.correct)
        fp = sum(1 for r in results if r.got == label and not r.correct)
        fn = sum(1 for r in results if r.case.expect[0] == label and not r.correct)
        per_act[label] = {"precision": round(tp / (tp + fp), 4) if tp + fp else None,
                          "recall": round(tp / (tp + fn), 4) if tp + fn else None, "tp": tp, "fp": fp, "fn": fn}
    confusions = Counter((r.case.expect[0], r.got) for r in results if not r.correct)
    latencies = [r.ms for r in results]
    return {"total": total, "correct": correct, "accuracy": round(correct / total, 4) if total else 0.0,
            "splits": splits, "per_act": per_act,
            "confusions": [{"expected": e, "got": g, "count": c} for (e, g), c in confusions.most_common(10)],
            "latency_ms": {"p50": round(percentile(latencies, 0.5), 4), "p99": round(percentile(latencies, 0.99), 4)}}


def format_act_report(results: list[ActResult], summary: dict[str, Any]) -> str:
    header = f"{_cut('id', 6)} {_cut('text', 34)} {_cut('expected', 12)} {_cut('got', 8)} cue"
    lines = [header, "-" * (len(header) + 12)]
    for r in results:
        mark = " " if r.correct else "x"
        lines.append(f"{_cut(r.case.id, 5)}{mark} {_cut(r.case.text, 34)} {_cut('|'.join(r.case.expect), 12)} "
                     f"{_cut(r.got, 8)} {r.cue or ''}")
    lines.append("")
    lines.append(f"acts: accuracy {summary['correct']}/{summary['total']} = {summary['accuracy']:.3f}")
    for name, split in sorted(summary["splits"].items()):
        lines.append(f"  split {name}: {split['correct']}/{split['total']} = {split['accuracy']:.3f}")
    lat = summary["latency_ms"]
    lines.append(f"latency ms: p50 {lat['p50']:.4f}  p99 {lat['p99']:.4f}")
    lines.append("")
    lines.append("per act: precision / recall")
    lines += label_tables(summary["per_act"], summary["confusions"], width=6)
    return "\n".join(lines)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval-acts", help="measure the dialogue-act recogniser (reactions) against a set of cases",
        description="Recognise the dialogue act of each case's text with the scenario's names and compare with "
                    "the expected act: per-case table, accuracy overall and per split, precision and recall per "
                    "act, confusions.")
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario JSON file (its character names)")
    parser.add_argument("dataset", metavar="DATASET", help="act evaluation set JSON file")
    parser.add_argument("--split", default=None, help="only the cases of this split (e.g. dev, heldout)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    parser.add_argument("--min-accuracy", type=float, default=None, help="exit 1 when accuracy is lower")
    parser.set_defaults(func=run_eval_acts)


def run_eval_acts(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem.format(), file=sys.stderr)
        return 1
    try:
        cases = load_act_cases(args.dataset)
    except DatasetError as exc:
        print(f"butai eval-acts: {exc}", file=sys.stderr)
        return 1
    if args.split:
        cases = [c for c in cases if c.split == args.split]
        if not cases:
            print(f"butai eval-acts: no case has split {args.split!r}", file=sys.stderr)
            return 2
    results = run_act_cases(ActRecogniser(SceneNames.of(scenario)), cases)
    summary = summarise_acts(results)
    if args.json:
        print(json.dumps({"scenario": args.scenario, "dataset": args.dataset, **summary,
                          "cases": [{"id": r.case.id, "text": r.case.text, "expect": list(r.case.expect),
                                     "got": r.got, "cue": r.cue, "correct": r.correct} for r in results]},
                         ensure_ascii=False, indent=1))
    else:
        print(format_act_report(results, summary))
    if args.min_accuracy is not None and summary["accuracy"] < args.min_accuracy:
        return 1
    return 0
