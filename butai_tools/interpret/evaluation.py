"""Evaluation of interpretation against a set of cases (`butai eval-interpret`).

A dataset is ``{"scenario": ..., "cases": [{"id", "setup", "to", "text",
"expect"}, ...]}`` (see docs/interpretation.md): each case plays its
``setup`` inputs with the rules from a new game (``start()`` first), then
interprets ``text`` (addressed to ``to`` when given) and compares the result
with ``expect`` (one input or a list of acceptable ones).

A miss is *narrowed* (the expected input was not offered to the backend:
not a candidate in that state, or removed by addressee or word narrowing),
*classifier* (offered, not chosen) or *refinement* (chosen, then changed by
a rule).  A result is *unsafe* when it is a move or 離脱 that ``expect``
does not allow.
"""
from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chalicelib.interpret.interpreter import Interpreter, TurnResult
from chalicelib.interpret.refine import SAME_PLACE
from chalicelib.scenario import GameRules, PlayerInput, ScenarioError, load_scenario
from chalicelib.scenario.inputs import InputSyntaxError


class DatasetError(ValueError):
    pass


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    expect: tuple[PlayerInput, ...]
    setup: tuple[PlayerInput, ...] = ()
    to: str | None = None
    split: str | None = None


@dataclass(frozen=True)
class Dataset:
    scenario: str | None
    cases: tuple[Case, ...]
    source: str = "<dataset>"


def read_json(path: str | Path, error: type[Exception] = ValueError) -> Any:
    """An evaluation file's JSON (a BOM allowed); a missing file or bad JSON raises `error` naming the place."""
    source = str(path)
    try:
        return json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise error(f"{source}: no such file") from None
    except json.JSONDecodeError as exc:
        raise error(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


def load_dataset(path: str | Path, rules: GameRules | None = None) -> Dataset:
    return parse_dataset(read_json(path, DatasetError), rules, str(path))


def parse_dataset(data: Any, rules: GameRules | None = None, source: str = "<dataset>") -> Dataset:
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise DatasetError(f'{source}: expected an object with a "cases" list')
    sc = rules.scenario if rules is not None else None
    cases, seen, problems = [], set(), []

    def parse_input(value: Any, where: str) -> PlayerInput | None:
        try:
            parsed = PlayerInput.parse(value)
        except InputSyntaxError as exc:
            problems.append(f"{source}:{where}: {exc}")
            return None
        if sc is not None:
            if parsed.is_intent and parsed.target not in sc.intents:
                problems.append(f'{source}:{where}: unknown intent "{parsed.target}"')
            if parsed.is_move and parsed.target not in sc.places:
                problems.append(f'{source}:{where}: unknown place "{parsed.target}"')
        return parsed

    for index, raw in enumerate(data["cases"]):
        if not isinstance(raw, dict):
            problems.append(f"{source}:case {index}: expected an object")
            continue
        case_id = str(raw.get("id") or f"#{index + 1}")
        where = f"case {case_id}"
        if case_id in seen:
            problems.append(f"{source}:{where}: duplicate id")
        seen.add(case_id)
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            problems.append(f'{source}:{where}: "text" must be a non-empty string')
            continue
        expect_raw = raw.get("expect")
        expect_list = expect_raw if isinstance(expect_raw, list) else [expect_raw]
        if not expect_list or expect_raw is None:
            problems.append(f'{source}:{where}: "expect" is missing')
            continue
        expect = [parse_input(e, where + " expect") for e in expect_list]
        setup_raw = raw.get("setup", [])
        if not isinstance(setup_raw, list):
            problems.append(f'{source}:{where}: "setup" must be a list')
            continue
        setup = [parse_input(s, where + " setup") for s in setup_raw]
        to = raw.get("to")
        if to is not None and sc is not None and to not in sc.characters:
            problems.append(f'{source}:{where}: unknown character "{to}" in "to"')
        if any(e is None for e in expect) or any(s is None for s in setup):
            continue
        cases.append(Case(case_id, text, tuple(expect), tuple(setup), to, raw.get("split")))  # type: ignore[arg-type]
    if problems:
        raise DatasetError("\n".join(problems))
    return Dataset(data.get("scenario"), tuple(cases), source)


# ---------------------------------------------------------------- running

@dataclass
class CaseResult:
    case: Case
    got: PlayerInput
    turn: TurnResult
    correct: bool
    unsafe: bool
    miss: str | None = None             # narrowed / classifier / refinement
    miss_detail: str | None = None      # which narrowing, which rule
    runs: list[str] = field(default_factory=list)   # results of every repeat

    @property
    def ms(self) -> float:
        return float(self.turn.debug.ms["total"])

    def to_dict(self) -> dict[str, Any]:
        scores = self.turn.interpretation.scores
        token = self.turn.debug.token
        return {
            "id": self.case.id, "split": self.case.split, "text": self.case.text,
            "setup": [str(s) for s in self.case.setup], "to": self.case.to,
            "expect": [str(e) for e in self.case.expect], "got": str(self.got), "token": token,
            "score": None if token is None or token not in scores else round(scores[token], 4),
            "correct": self.correct, "unsafe": self.unsafe, "miss": self.miss, "miss_detail": self.miss_detail,
            "rule": self.turn.rule, "error": self.turn.error, "addressee": self.turn.addressee,
            "model_input": model_input(self.turn), "ms": round(self.ms, 3), "runs": self.runs,
            "debug": self.turn.debug.model_dump(mode="json"),
        }


def is_unsafe(got: PlayerInput, expect: Iterable[PlayerInput]) -> bool:
    return got.moves_away and got not in tuple(expect)


def model_input(turn: TurnResult) -> str | None:
    """The input the backend chose, before refinement (None when no backend was asked)."""
    return turn.debug.backend.input if turn.debug.backend is not None else None


def classify_miss(case: Case, turn: TurnResult) -> tuple[str, str]:
    debug = turn.debug
    candidates = {c.input: c.token for c in debug.candidates}
    by_addressee = {n.input for n in debug.narrowing.addressee}
    by_words = {n.input: n.token for n in debug.narrowing.words}
    offered = set(debug.offered)
    offered_inputs = {c.input for c in debug.candidates if c.token in offered}
    chosen = model_input(turn)
    expected = [str(e) for e in case.expect]
    if chosen is not None and chosen in expected:
        return "refinement", f"rule {turn.rule or '?'} changed {chosen} to {turn.input}"
    reachable = [e for e in expected if e == str(PlayerInput.none()) or e in offered_inputs]
    if reachable or debug.rule == SAME_PLACE:
        detail = f"backend chose {chosen}"
        if turn.error:
            detail += f" (error {turn.error})"
        return "classifier", detail
    reasons = []
    for e in expected:
        if e not in candidates:
            reasons.append(f"{e}: not a candidate in this state")
        elif e in by_addressee:
            reasons.append(f"{e}: removed by addressee narrowing ({turn.addressee})")
        elif e in by_words:
            reasons.append(f"{e}: removed by word narrowing (none of its words in the text)")
    return "narrowed", "; ".join(reasons) or "not offered"


def run_dataset(interpreter: Interpreter, dataset: Dataset, *, repeat: int = 1,
                progress: Callable[[int, int], None] | None = None) -> list[CaseResult]:
    rules = interpreter.rules
    results: list[CaseResult] = []
    states = {}
    total = len(dataset.cases) * max(1, repeat)
    done = 0
    for case in dataset.cases:
        key = tuple(str(s) for s in case.setup)
        state = states.get(key)
        if state is None:
            step = rules.start()
            for s in case.setup:
                step = rules.handle(s, step.state)
            state = states[key] = step.state
        runs: list[TurnResult] = []
        for _ in range(max(1, repeat)):
            runs.append(interpreter.interpret_turn(case.text, state, case.to))
            done += 1
            if progress is not None:
                progress(done, total)
        outcomes = [str(r.input) for r in runs]
        modal = Counter(outcomes).most_common(1)[0][0]
        turn = next(r for r in runs if str(r.input) == modal)
        got = turn.input
        correct = got in case.expect
        result = CaseResult(case, got, turn, correct, is_unsafe(got, case.expect), runs=outcomes)
        if not correct:
            result.miss, result.miss_detail = classify_miss(case, turn)
        results.append(result)
        result._all_ms = [float(r.debug.ms["total"]) for r in runs]  # type: ignore[attr-defined]
    return results


# ---------------------------------------------------------------- figures

def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(results: list[CaseResult], *, repeat: int = 1) -> dict[str, Any]:
    total = len(results)
    correct = sum(r.correct for r in results)
    unsafe = sum(r.unsafe for r in results)
    latencies = [ms for r in results for ms in getattr(r, "_all_ms", [r.ms])]
    splits: dict[str, dict[str, Any]] = {}
    for r in results:
        if r.case.split:
            entry = splits.setdefault(r.case.split, {"total": 0, "correct": 0, "unsafe": 0})
            entry["total"] += 1
            entry["correct"] += r.correct
            entry["unsafe"] += r.unsafe
    for entry in splits.values():
        entry["accuracy"] = round(entry["correct"] / entry["total"], 4) if entry["total"] else 0.0
    labels = sorted({str(e) for r in results for e in r.case.expect} | {str(r.got) for r in results})
    per_intent = {}
    for label in labels:
        tp = sum(1 for r in results if str(r.got) == label and r.correct)
        fp = sum(1 for r in results if str(r.got) == label and not r.correct)
        fn = sum(1 for r in results if str(r.case.expect[0]) == label and not r.correct)
        per_intent[label] = {
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "tp": tp, "fp": fp, "fn": fn,
        }
    confusions = Counter((str(r.case.expect[0]), str(r.got)) for r in results if not r.correct)
    misses: dict[str, dict[str, Any]] = {}
    for r in results:
        if r.miss:
            entry = misses.setdefault(r.miss, {"count": 0, "cases": []})
            entry["count"] += 1
            entry["cases"].append({"id": r.case.id, "detail": r.miss_detail})
    unsure = sum(1 for r in results if r.turn.interpretation.unsure)
    agreeing = sum(1 for r in results if len(set(r.runs)) <= 1)
    errors = Counter(r.turn.error for r in results if r.turn.error)
    rules = Counter(r.turn.rule for r in results if r.turn.rule)
    return {
        "total": total, "correct": correct, "accuracy": round(correct / total, 4) if total else 0.0,
        "unsafe": unsafe, "splits": splits,
        "unsure": unsure, "unsure_share": round(unsure / total, 4) if total else 0.0,
        "latency_ms": {"p50": round(percentile(latencies, 0.5), 3), "p95": round(percentile(latencies, 0.95), 3),
                       "p99": round(percentile(latencies, 0.99), 3),
                       "mean": round(statistics.fmean(latencies), 3) if latencies else 0.0},
        "agreement": {"repeat": repeat, "cases_all_agree": agreeing,
                      "rate": round(agreeing / total, 4) if total else 1.0},
        "per_intent": per_intent,
        "confusions": [{"expected": e, "got": g, "count": c} for (e, g), c in confusions.most_common(10)],
        "misses": misses, "errors": dict(errors), "rules": dict(rules),
    }


def _cut(text: str, width: int) -> str:
    """Cut to a display width (East Asian characters count 2)."""
    import unicodedata
    out, used = [], 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if used + w > width:
            out.append("…")
            used += 1
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * max(0, width - used)


def label_tables(per_label: dict[str, dict], confusions: list[dict], *, width: int) -> list[str]:
    """Report lines: precision / recall per label, then the most frequent confusions (eval-interpret, eval-acts)."""
    lines = []
    for label, figures in per_label.items():
        p = "-" if figures["precision"] is None else f"{figures['precision']:.2f}"
        rc = "-" if figures["recall"] is None else f"{figures['recall']:.2f}"
        lines.append(f"  {_cut(label, width)} {p:>5} / {rc:<5}  (tp {figures['tp']}, fp {figures['fp']}, "
                     f"fn {figures['fn']})")
    if confusions:
        lines.append("")
        lines.append("most frequent confusions (expected → got)")
        lines += [f"  {c['count']:>3}  {c['expected']} → {c['got']}" for c in confusions]
    return lines


def load_for_command(command: str, scenario_path: str, dataset_path: str,
                     split: str | None) -> tuple[GameRules, Dataset] | int:
    """A command's scenario and data set (only ``split``'s cases when given), or the exit code after saying
    on stderr what is wrong with them."""
    try:
        scenario = load_scenario(scenario_path)
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem.format(), file=sys.stderr)
        return 1
    rules = GameRules(scenario)
    try:
        dataset = load_dataset(dataset_path, rules)
    except DatasetError as exc:
        print(f"butai {command}: {exc}", file=sys.stderr)
        return 1
    if split:
        dataset = replace(dataset, cases=tuple(c for c in dataset.cases if c.split == split))
    return rules, dataset


def format_report(results: list[CaseResult], summary: dict[str, Any], *, backend: str = "") -> str:
    lines = []
    header = f"{_cut('id', 6)} {_cut('text', 34)} {_cut('expected', 22)} {_cut('got', 20)} {_cut('tok', 4)} " \
             f"{_cut('score', 6)} {_cut('rule', 16)} {'ms':>7}"
    lines.append(header)
    lines.append("-" * len(header))
    for r in results:
        d = r.to_dict()
        mark = " " if r.correct else ("!" if r.unsafe else "x")
        score = "" if d["score"] is None else f"{d['score']:.2f}"
        lines.append(f"{_cut(r.case.id, 5)}{mark} {_cut(r.case.text, 34)} {_cut('|'.join(d['expect']), 22)} "
                     f"{_cut(d['got'], 20)} {_cut(d['token'] or '-', 4)} {_cut(score, 6)} "
                     f"{_cut(d['rule'] or d['error'] or '', 16)} {r.ms:7.2f}")
    lines.append("")
    title = f"backend {backend}: " if backend else ""
    lines.append(f"{title}accuracy {summary['correct']}/{summary['total']} = {summary['accuracy']:.3f}   "
                 f"unsafe {summary['unsafe']}")
    for name, split in sorted(summary["splits"].items()):
        lines.append(f"  split {name}: {split['correct']}/{split['total']} = {split['accuracy']:.3f}  "
                     f"unsafe {split['unsafe']}")
    lines.append(f"unsure (a cascade would ask the model): {summary['unsure']}/{summary['total']} "
                 f"= {summary['unsure_share']:.3f}")
    lat = summary["latency_ms"]
    lines.append(f"latency ms: p50 {lat['p50']:.3f}  p95 {lat['p95']:.3f}  p99 {lat['p99']:.3f}")
    agreement = summary["agreement"]
    lines.append(f"agreement across {agreement['repeat']} repeat(s): {agreement['cases_all_agree']}/{summary['total']} "
                 f"cases always gave the same result ({agreement['rate']:.3f})")
    lines.append("")
    lines.append("per input: precision / recall")
    lines += label_tables(summary["per_intent"], summary["confusions"], width=24)
    lines.append("")
    lines.append("misses by kind")
    if not summary["misses"]:
        lines.append("  none")
    for kind in ("narrowed", "classifier", "refinement"):
        entry = summary["misses"].get(kind)
        if not entry:
            continue
        lines.append(f"  {kind}: {entry['count']}")
        for c in entry["cases"]:
            lines.append(f"    {c['id']}: {c['detail']}")
    if summary["errors"]:
        lines.append("")
        lines.append("backend errors: " + ", ".join(f"{k} {v}" for k, v in summary["errors"].items()))
    return "\n".join(lines)
