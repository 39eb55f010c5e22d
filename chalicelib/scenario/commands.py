"""`butai trace`, `butai lint`, `butai schema`."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from .inputs import InputSyntaxError, PlayerInput
from .lint import lint_path
from .loader import CompiledScenario, ScenarioError, expected_one_of, load_scenario
from .model import scenario_json_schema
from .rules import GameRules, Step, token


def register(subparsers: Any) -> None:
    trace = subparsers.add_parser(
        "trace", help="play inputs through a scenario's rules (no model) and print each step",
        description="Play inputs from a new game with no model: start() first, then each INPUT "
                    "(意図:X, 移動:P, 離脱, なし).")
    trace.add_argument("scenario", metavar="SCENARIO", help="scenario JSON file")
    trace.add_argument("inputs", metavar="INPUT", nargs="*", help="player inputs, e.g. なし 意図:音楽 移動:控え室")
    trace.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    trace.set_defaults(func=run_trace)

    lint = subparsers.add_parser(
        "lint", help="check scenarios: load errors and warnings",
        description="Report load errors and warnings as FILE:WHERE: error|warning: MESSAGE. "
                    "Exit 1 on errors (with --strict, also on warnings).")
    lint.add_argument("scenarios", metavar="SCENARIO", nargs="+", help="scenario JSON files")
    lint.add_argument("--strict", action="store_true", help="treat warnings as failures")
    lint.set_defaults(func=run_lint)

    schema = subparsers.add_parser(
        "schema", help="print the JSON Schema of the scenario format",
        description="Print the JSON Schema of the scenario format (scenarios/schema.json is this output).")
    schema.set_defaults(func=run_schema)


# ---------------------------------------------------------------- schema

def schema_text() -> str:
    return json.dumps(scenario_json_schema(), ensure_ascii=False, indent=2) + "\n"


def run_schema(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
    return 0


# ---------------------------------------------------------------- lint

def run_lint(args: argparse.Namespace) -> int:
    errors = warnings = 0
    for path in args.scenarios:
        problems = lint_path(path)
        for problem in problems:
            print(problem.format())
        file_errors = sum(1 for p in problems if p.severity == "error")
        file_warnings = len(problems) - file_errors
        errors += file_errors
        warnings += file_warnings
        print(f"{path}: {file_errors} error{'s' if file_errors != 1 else ''}, "
              f"{file_warnings} warning{'s' if file_warnings != 1 else ''}", file=sys.stderr)
    if errors or (args.strict and warnings):
        return 1
    return 0


# ---------------------------------------------------------------- trace

def parse_inputs(texts: list[str], scenario: CompiledScenario) -> list[PlayerInput]:
    """Parse CLI inputs, rejecting ids the scenario lacks (a typo in a trace
    should stop it, not quietly become a refused move)."""
    inputs = []
    for text in texts:
        parsed = PlayerInput.parse(text)
        if parsed.kind == "intent" and parsed.target not in scenario.intents:
            raise InputSyntaxError(f'unknown intent "{parsed.target}" in "{text}"; '
                                   + expected_one_of("intent", scenario.intents, parsed.target))
        if parsed.kind == "move" and parsed.target not in scenario.places:
            raise InputSyntaxError(f'unknown place "{parsed.target}" in "{text}"; '
                                   + expected_one_of("place", scenario.places, parsed.target))
        inputs.append(parsed)
    return inputs


def trace_steps(rules: GameRules, inputs: list[PlayerInput]) -> list[tuple[Step, list[PlayerInput]]]:
    """Each step from start() on, with the candidates after it."""
    step = rules.start()
    out = [(step, rules.candidates(step.state))]
    for player_input in inputs:
        step = rules.handle(player_input, step.state)
        out.append((step, rules.candidates(step.state)))
    return out


def trace_json(steps: list[tuple[Step, list[PlayerInput]]]) -> dict[str, Any]:
    return {"steps": [{
        "input": None if step.input is None else str(step.input),
        "lines": [{"id": line.id, "speaker": line.speaker, "text": line.text} for line in step.lines],
        "effects": [str(e) for e in step.effects],
        "free_talk": None if step.free_talk is None else step.free_talk.to_dict(),
        "notices": [n.to_dict() for n in step.notices],
        "place": step.state.place,
        "candidates": [str(c) for c in candidates],
    } for step, candidates in steps]}


def write_trace_text(steps: list[tuple[Step, list[PlayerInput]]], scenario: CompiledScenario, out: TextIO) -> None:
    print(f"{scenario.title} ({scenario.source})", file=out)
    for number, (step, candidates) in enumerate(steps):
        label = "(開始)" if step.input is None else str(step.input)
        print(f"\n#{number} {label}", file=out)
        if step.free_talk is not None:
            ft = step.free_talk
            about = f"意図:{ft.intent}" if ft.intent is not None else "なし"
            print(f"  自由会話  {ft.speaker} ({about}; knowledge {len(ft.knowledge)})", file=out)
            for entry in ft.knowledge:
                print(f"            - {entry.info}", file=out)
        for line in step.lines:
            print(f"  {line.id:<6} {line.speaker}「{line.text}」", file=out)
            for effect in line.effects:
                print(f"         effect {effect}", file=out)
        for notice in step.notices:
            print(f"  notice {notice.kind}: {notice.text}", file=out)
        print(f"  place  {step.state.place}", file=out)
        print("  candidates " + " ".join(f"{token(i)} {c}" for i, c in enumerate(candidates)), file=out)


def run_trace(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        for problem in exc.problems:
            print(problem.format(), file=sys.stderr)
        return 1
    try:
        inputs = parse_inputs(args.inputs, scenario)
    except InputSyntaxError as exc:
        print(f"butai trace: error: {exc}", file=sys.stderr)
        return 2
    steps = trace_steps(GameRules(scenario), inputs)
    if args.json:
        print(json.dumps(trace_json(steps), ensure_ascii=False, indent=2))
    else:
        write_trace_text(steps, scenario, sys.stdout)
    return 0
