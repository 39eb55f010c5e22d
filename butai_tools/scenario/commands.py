"""`butai trace`, `butai lint`, `butai schema`."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from butai_tools.scenario.lint import lint_path
from chalicelib.scenario.inputs import InputSyntaxError, PlayerInput
from chalicelib.scenario.loader import CompiledScenario, ScenarioError, expected_one_of, load_scenario
from chalicelib.scenario.model import scenario_json_schema
from chalicelib.scenario.rules import GameRules, Step, token


def register(subparsers: Any) -> None:
    trace = subparsers.add_parser(
        "trace", help="play inputs through a scenario's rules (no model) and print each step",
        description="Play inputs from a new game with no model: start() first, then each INPUT "
                    "(意図:X, 移動:P, 離脱, なし), or free text as a player would type it (「こんばんは」), "
                    "interpreted with the embedded lexical backend.  Free conversation shows the authored answer "
                    "(knowledge line, reaction or fallback) the embedded default would give.")
    trace.add_argument("scenario", metavar="SCENARIO", help="scenario JSON file")
    trace.add_argument("inputs", metavar="INPUT", nargs="*",
                       help="player inputs or free text, e.g. なし 意図:音楽 移動:控え室 こんばんは")
    trace.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    trace.add_argument("--dialogue", metavar="FILE", default=None,
                       help="replay every dialogue of a dialogue set (scenarios/eval/dialogues.json) through the whole "
                            "turn logic and check each turn's expect; exit 1 when a case is wrong or unsafe")
    trace.add_argument("--split", default=None, help="with --dialogue: only the dialogues of this split")
    trace.add_argument("--id", action="append", default=[], metavar="ID",
                       help="with --dialogue: only this dialogue (repeatable)")
    trace.add_argument("--failures", action="store_true",
                       help="with --dialogue: print only the turns that are not right (and the figures)")
    trace.set_defaults(func=run_trace)

    lint = subparsers.add_parser(
        "lint", help="check scenarios: load errors and warnings",
        description="Report load errors and warnings as FILE:WHERE: error|warning: MESSAGE. "
                    "Exit 1 on errors (with --strict, also on warnings).")
    lint.add_argument("scenarios", metavar="SCENARIO", nargs="+", help="scenario JSON files")
    lint.add_argument("--strict", action="store_true", help="treat warnings as failures")
    lint.add_argument("--hints", action="store_true",
                      help="also print hints (suggestions that are not problems, e.g. words no example uses)")
    lint.set_defaults(func=run_lint)

    schema = subparsers.add_parser(
        "schema", help="print the JSON Schema of the scenario format",
        description="Print the JSON Schema of the scenario format (scenarios/schema.json is this output).")
    schema.add_argument("--reference", action="store_true",
                        help="print the field reference as Markdown instead (docs/scenario-format.md holds it)")
    schema.set_defaults(func=run_schema)


# ---------------------------------------------------------------- schema

def schema_text() -> str:
    return json.dumps(scenario_json_schema(), ensure_ascii=False, indent=2) + "\n"


def run_schema(args: argparse.Namespace) -> int:
    if getattr(args, "reference", False):
        from butai_tools.scenario.reference import reference_markdown
        sys.stdout.write(reference_markdown())
        return 0
    sys.stdout.write(schema_text())
    return 0


# ---------------------------------------------------------------- lint

def run_lint(args: argparse.Namespace) -> int:
    errors = warnings = 0
    for path in args.scenarios:
        if _is_schema(path):
            # `butai lint scenarios/*.json` also matches the JSON Schema, which is not a scenario.
            print(f"{path}: skipped (the JSON Schema of the format, not a scenario)", file=sys.stderr)
            continue
        problems = lint_path(path)
        hints = [p for p in problems if p.severity == "hint"]
        problems = [p for p in problems if p.severity != "hint"]
        for problem in problems + (hints if getattr(args, "hints", False) else []):
            print(problem.format())
        file_errors = sum(1 for p in problems if p.severity == "error")
        file_warnings = len(problems) - file_errors
        errors += file_errors
        warnings += file_warnings
        more = f", {len(hints)} hint{'s' if len(hints) != 1 else ''}" if hints else ""
        if hints and not getattr(args, "hints", False):
            more += " (--hints shows them)"
        print(f"{path}: {file_errors} error{'s' if file_errors != 1 else ''}, "
              f"{file_warnings} warning{'s' if file_warnings != 1 else ''}{more}", file=sys.stderr)
    if errors or (args.strict and warnings):
        return 1
    return 0


def _is_schema(path: str) -> bool:
    """A JSON Schema document (scenarios/schema.json) rather than a scenario."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    return '"$schema": "https://json-schema.org/' in head and '"$defs"' in head or \
        head.lstrip().startswith('{\n  "$schema": "https://json-schema.org/')


# ---------------------------------------------------------------- trace

# Free text in a trace: anything that does not start like a written input.
_INPUT_LIKE = ("意図", "移動", "離脱", "なし")


def _is_free_text(text: str) -> bool:
    try:
        PlayerInput.parse(text)
        return False
    except InputSyntaxError:
        return not text.strip().startswith(_INPUT_LIKE)

def parse_inputs(texts: list[str], scenario: CompiledScenario) -> list[PlayerInput]:
    """Parse CLI inputs, rejecting ids the scenario lacks (a typo in a trace
    should stop it, not quietly become a refused move)."""
    inputs = []
    for text in texts:
        if _is_free_text(text):
            inputs.append(text)      # type: ignore[arg-type]  # interpreted when played
            continue
        parsed = PlayerInput.parse(text)
        if parsed.is_intent and parsed.target not in scenario.intents:
            raise InputSyntaxError(f'unknown intent "{parsed.target}" in "{text}"; '
                                   + expected_one_of("intent", scenario.intents, parsed.target))
        if parsed.is_move and parsed.target not in scenario.places:
            raise InputSyntaxError(f'unknown place "{parsed.target}" in "{text}"; '
                                   + expected_one_of("place", scenario.places, parsed.target))
        inputs.append(parsed)
    return inputs


@dataclass
class TracedStep:
    step: Step
    candidates: list[PlayerInput]
    text: str | None = None                  # the free text, when one was given
    decision: dict[str, Any] | None = None   # how the embedded backend read it
    answer: dict[str, Any] | None = None     # the authored answer to free conversation
    errors: list[str] | None = None          # what went wrong in the turn (its debug record's errors)

    # (step, candidates) unpacking, as before free text existed
    def __iter__(self):
        return iter((self.step, self.candidates))


def trace_steps(rules: GameRules, inputs: list[PlayerInput | str], path: Path | None = None) -> list[TracedStep]:
    """Each step from start() on, with the candidates after it, played on a scenario stage held in memory
    through the director's own path (stage_play.py), with no model: free text is interpreted with the lexical
    backend and read against what was said; written inputs are played as given; free conversation gets the
    authored answer of the embedded default.  A turn that cannot be played shows as the stage shows it (its
    fallback line, its errors)."""
    from butai_tools.scenario.stage_play import StagePlay
    source = path if path is not None else Path(rules.scenario.source)
    stage = StagePlay(source, rules.scenario)
    start = stage.rules.start()
    out = [TracedStep(start, rules.candidates(start.state))]
    for item in inputs:
        text = item if isinstance(item, str) else None
        on_stage = stage.play(text, None if isinstance(item, str) else item)
        played, record = on_stage.played, on_stage.turn
        errors = list(record.errors) if record is not None and record.errors else None
        if played is None:
            # unplayable: the stage answered with a fallback line; the game did not move
            step = Step(None, (), None, (), on_stage.state)
            answer = {"source": "fallback", "ref": None, "act": "なし", "speaker": record.free_talk.speaker,
                      "text": record.free_talk.text, "expression": record.free_talk.expression} \
                if record is not None and record.free_talk is not None else None
            out.append(TracedStep(step, rules.candidates(on_stage.state), text, None, answer, errors))
            continue
        decision = None
        if text is not None:
            decision = _decision(played)
        answer = played.answer.to_dict() if played.answer is not None else None
        out.append(TracedStep(played.step, rules.candidates(played.step.state), text, decision, answer, errors))
    return out


def _decision(played) -> dict[str, Any]:
    """How the line was read (for the trace's 解釈 line and its JSON)."""
    if played.result is not None:
        debug = played.result.debug
        backend = debug.backend
        decision = {"input": str(played.input), "rule": played.result.rule,
                    "backend": backend.input if backend else None, "token": debug.token,
                    "addressee": played.addressee,
                    "scores": {t: s for t, s in sorted((backend.scores if backend else {}).items(),
                                                        key=lambda kv: -kv[1])[:3] if s > 0},
                    "narrowed": [n.input for n in debug.narrowing.words]}
    else:
        decision = {"input": str(played.input), "rule": played.interpretation.rule, "backend": None,
                    "token": None, "addressee": played.addressee, "scores": {}, "narrowed": []}
    if played.context:
        decision["context"] = played.context
    return decision


def trace_json(steps: list[TracedStep]) -> dict[str, Any]:
    out = []
    for traced in steps:
        step, candidates = traced.step, traced.candidates
        entry: dict[str, Any] = {
            "input": None if step.input is None else str(step.input),
            "lines": [{"id": line.id, "speaker": line.speaker, "text": line.text} for line in step.lines],
            "effects": [str(e) for e in step.effects],
            "free_talk": None if step.free_talk is None else step.free_talk.to_dict(),
            "notices": [n.to_dict() for n in step.notices],
            "place": step.state.place,
            "candidates": [str(c) for c in candidates],
        }
        if traced.text is not None:
            entry = {"text": traced.text, "decision": traced.decision, **entry}
        if traced.answer is not None:
            entry["answer"] = traced.answer
        if traced.errors:
            entry["errors"] = traced.errors
        out.append(entry)
    return {"steps": out}


def write_trace_text(steps: list[TracedStep], scenario: CompiledScenario, out: TextIO) -> None:
    print(f"{scenario.title} ({scenario.source})", file=out)
    for number, traced in enumerate(steps):
        step, candidates = traced.step, traced.candidates
        label = "(開始)" if step.input is None else str(step.input)
        if traced.text is not None:
            label = f"「{traced.text}」 → {step.input}"
        print(f"\n#{number} {label}", file=out)
        if traced.decision is not None:
            d = traced.decision
            scores = " ".join(f"{t} {s:.2f}" for t, s in d["scores"].items()) or "-"
            print(f"  解釈    backend {d['backend'] or 'なし'} ({d['token'] or '-'}), rule {d['rule'] or '-'}, "
                  f"scores {scores}" + (f", addressee {d['addressee']}" if d["addressee"] else "")
                  + (f", narrowed {' '.join(d['narrowed'])}" if d["narrowed"] else ""), file=out)
            if d.get("context"):
                # what the conversation decided on top of the reading (a topic set aside, an order, a pick…)
                print("  判断    " + ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}"
                                           for k, v in d["context"].items()), file=out)
        if step.free_talk is not None:
            ft = step.free_talk
            about = str(PlayerInput.intent(ft.intent) if ft.intent is not None else PlayerInput.none())
            print(f"  自由会話  {ft.speaker} ({about}; knowledge {len(ft.knowledge)})", file=out)
            for entry in ft.knowledge:
                print(f"            - {entry.info}", file=out)
            if traced.answer is not None:
                a = traced.answer
                print(f"  答え    {a['source']} {a['ref'] or '-'} (act {a['act']}) {a['speaker']}「{a['text']}」 "
                      f"[{a['expression']}]", file=out)
        if step.free_talk is None and traced.answer is not None:
            a = traced.answer
            print(f"  答え    {a['source']} {a['ref'] or '-'} {a['speaker']}「{a['text']}」 [{a['expression']}]", file=out)
        for effect in (traced.answer or {}).get("effects", ()):
            print(f"         effect {effect}", file=out)
        for line in step.lines:
            print(f"  {line.id:<6} {line.speaker}「{line.text}」", file=out)
            for effect in line.effects:
                print(f"         effect {effect}", file=out)
        for notice in step.notices:
            print(f"  notice {notice.kind}: {notice.text}", file=out)
        for error in traced.errors or ():
            print(f"  error  {error}", file=out)
        print(f"  place  {step.state.place}", file=out)
        print("  candidates " + " ".join(f"{token(i)} {c}" for i, c in enumerate(candidates)), file=out)


def _run_dialogues(args: argparse.Namespace, scenario: CompiledScenario) -> int:
    from butai_tools.scenario.dialogues import (
        DialogueError,
        dialogue_stage,
        format_outcomes,
        load_dialogues,
        run_dialogues,
        summarise,
    )
    if args.inputs:
        print("butai trace: error: give either inputs or --dialogue, not both", file=sys.stderr)
        return 2
    rules = GameRules(scenario)
    try:
        data = load_dialogues(args.dialogue, rules)
    except DialogueError as exc:
        print(f"butai trace: {exc}", file=sys.stderr)
        return 1
    outcomes = run_dialogues(dialogue_stage(args.scenario, rules), data, split=args.split, ids=args.id)
    if not outcomes:
        print("butai trace: no dialogue matches --split/--id", file=sys.stderr)
        return 2
    summary = summarise(outcomes)
    if args.json:
        print(json.dumps({**summary, "turns": [o.to_dict() for o in outcomes]}, ensure_ascii=False, indent=1))
    else:
        print(format_outcomes(outcomes, summary, verbose=not args.failures))
    return 1 if summary["wrong"] or summary["unsafe"] else 0


def run_trace(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem.format(), file=sys.stderr)
        return 1
    if getattr(args, "dialogue", None):
        return _run_dialogues(args, scenario)
    try:
        inputs = parse_inputs(args.inputs, scenario)
    except InputSyntaxError as exc:
        print(f"butai trace: error: {exc}", file=sys.stderr)
        return 2
    steps = trace_steps(GameRules(scenario), inputs, Path(args.scenario))
    if args.json:
        print(json.dumps(trace_json(steps), ensure_ascii=False, indent=2))
    else:
        write_trace_text(steps, scenario, sys.stdout)
    return 0
