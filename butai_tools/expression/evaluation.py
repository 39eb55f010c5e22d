"""Measuring an expression judge on lines with expected faces.

A data set (``scenarios/eval/expression.json``) lists, per character, the
keys it has images for, and cases ``{id, split, character, text, expect}``.
Each case is judged with its character's keys; the summary gives accuracy
(overall and per split, so the held-out split is reported on its own), the
confusion of expected against judged, and the ``unsafe`` count: judgments
that turn the line's feeling around (a smile on an apology, a troubled face
on thanks), which must stay at zero.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from butai_tools.interpret.evaluation import percentile
from chalicelib.expression.judgment import ExpressionChoice, ExpressionJudge, contradicts

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATASET = ROOT / "scenarios" / "eval" / "expression.json"


class DatasetError(ValueError):
    pass


@dataclass(frozen=True)
class Case:
    id: str
    split: str
    character: str
    text: str
    expect: str


@dataclass(frozen=True)
class Dataset:
    characters: dict[str, tuple[str, ...]]
    cases: tuple[Case, ...]

    def choice(self, case: Case) -> ExpressionChoice:
        return ExpressionChoice.of(self.characters[case.character], case.character)


@dataclass
class CaseResult:
    case: Case
    judged: str
    scores: dict[str, float]
    ms: float
    error: str | None = None

    @property
    def correct(self) -> bool:
        return self.judged == self.case.expect

    @property
    def unsafe(self) -> bool:
        return contradicts(self.judged, self.case.expect)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.case.id, "split": self.case.split, "character": self.case.character,
                "text": self.case.text, "expect": self.case.expect, "judged": self.judged,
                "correct": self.correct, "unsafe": self.unsafe, "ms": round(self.ms, 4),
                "scores": {k: round(v, 4) for k, v in self.scores.items()}, "error": self.error}


def load_dataset(path: str | Path = DEFAULT_DATASET) -> Dataset:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: {exc}") from None
    characters = {str(k): tuple(v) for k, v in (raw.get("characters") or {}).items()}
    cases, problems, seen = [], [], set()
    for i, item in enumerate(raw.get("cases") or []):
        try:
            case = Case(str(item["id"]), str(item.get("split", "dev")), str(item["character"]), str(item["text"]),
                        str(item["expect"]))
        except (KeyError, TypeError):
            problems.append(f"case {i}: needs id, character, text and expect")
            continue
        if case.id in seen:
            problems.append(f"{case.id}: id given twice")
        seen.add(case.id)
        if case.character not in characters:
            problems.append(f"{case.id}: character {case.character!r} is not listed under characters")
        elif case.expect not in characters[case.character]:
            problems.append(f"{case.id}: {case.character} has no {case.expect!r} expression")
        cases.append(case)
    if problems:
        raise DatasetError("; ".join(problems))
    if not cases:
        raise DatasetError(f"{path}: no cases")
    return Dataset(characters, tuple(cases))


def run_dataset(judge: ExpressionJudge, dataset: Dataset,
                progress: Callable[[int, int], None] | None = None) -> list[CaseResult]:
    results = []
    for index, case in enumerate(dataset.cases, 1):
        start = time.perf_counter()
        judgment = judge.judge(case.text, dataset.choice(case))
        results.append(CaseResult(case, judgment.expression, judgment.scores,
                                  (time.perf_counter() - start) * 1000.0, judgment.error))
        if progress:
            progress(index, len(dataset.cases))
    return results


def _score(results: list[CaseResult]) -> dict[str, Any]:
    correct = sum(r.correct for r in results)
    return {"cases": len(results), "correct": correct,
            "accuracy": round(correct / len(results), 4) if results else 0.0,
            "unsafe": sum(r.unsafe for r in results)}


def summarise(results: list[CaseResult]) -> dict[str, Any]:
    splits = sorted({r.case.split for r in results})
    characters = sorted({r.case.character for r in results})
    confusion: dict[str, dict[str, int]] = {}
    for r in results:
        row = confusion.setdefault(r.case.expect, {})
        row[r.judged] = row.get(r.judged, 0) + 1
    timings = [r.ms for r in results]
    return {
        **_score(results),
        "splits": {s: _score([r for r in results if r.case.split == s]) for s in splits},
        "characters": {c: _score([r for r in results if r.case.character == c]) for c in characters},
        "confusion": {k: dict(sorted(v.items())) for k, v in sorted(confusion.items())},
        "errors": sum(1 for r in results if r.error),
        "p50_ms": round(percentile(timings, 0.5), 4), "p99_ms": round(percentile(timings, 0.99), 4),
    }


def format_report(results: list[CaseResult], summary: dict[str, Any], judge: str) -> str:
    lines = [f"expression judge: {judge}", ""]
    for r in results:
        if not r.correct:
            mark = "UNSAFE" if r.unsafe else "miss"
            lines.append(f"  {mark:<6} {r.case.id:<14} {r.case.expect:>11} → {r.judged:<11} {r.case.text}")
    if len(lines) > 2:
        lines.append("")
    lines.append(f"accuracy {summary['correct']}/{summary['cases']} = {summary['accuracy']:.3f}   "
                 f"unsafe {summary['unsafe']}   p50 {summary['p50_ms']:.3f} ms   p99 {summary['p99_ms']:.3f} ms")
    for name, s in summary["splits"].items():
        lines.append(f"  split {name:<10} {s['correct']}/{s['cases']} = {s['accuracy']:.3f}   unsafe {s['unsafe']}")
    for name, s in summary["characters"].items():
        lines.append(f"  {name:<16} {s['correct']}/{s['cases']} = {s['accuracy']:.3f}")
    keys = sorted({k for row in summary["confusion"].values() for k in row} | set(summary["confusion"]))
    width = max(len(k) for k in keys) + 1
    lines += ["", "confusion (rows: expected, columns: judged)",
              " " * width + "".join(f"{k[:5]:>6}" for k in keys)]
    for expect in keys:
        row = summary["confusion"].get(expect, {})
        lines.append(f"{expect:<{width}}" + "".join(f"{row.get(k, 0) or '.':>6}" for k in keys))
    return "\n".join(lines)


def bench(judge: ExpressionJudge, dataset: Dataset, rounds: int = 50) -> dict[str, Any]:
    """Milliseconds per judgment over every case, ``rounds`` times (after one warm pass)."""
    run_dataset(judge, dataset)
    timings: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(max(1, rounds)):
        for case in dataset.cases:
            choice = dataset.choice(case)
            start = clock()
            judge.judge(case.text, choice)
            timings.append((clock() - start) / 1e6)
    return {"judge": getattr(judge, "name", "?"), "cases": len(dataset.cases), "rounds": rounds,
            "judgments": len(timings), "p50_ms": round(percentile(timings, 0.5), 4),
            "p99_ms": round(percentile(timings, 0.99), 4), "max_ms": round(max(timings), 4)}
