"""The `butai` command.

Each area registers its own subcommands (see ``COMMAND_MODULES``), so this file
stays a table of contents rather than a grab bag.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# Modules exposing ``register(subparsers)``; each adds its commands and sets
# ``func`` on its parsers.  ``bench`` subcommands register through
# ``register_bench(bench_subparsers)`` when a module defines it.
COMMAND_MODULES = (
    "butai_tools.local.commands",
    "butai_tools.stage.commands",
    "butai_tools.scenario.commands",
    "butai_tools.interpret.commands",
    "butai_tools.interpret.acts_eval",
    "butai.commands",
    "butai_tools.llm.commands",
    "butai_tools.expression.commands",
    "butai_tools.voice.commands",
)
BENCH_MODULES = (
    "butai_tools.bench.stage",
    "butai_tools.bench.rules",
    "butai_tools.bench.interpret",
    "butai_tools.bench.classify",
    "butai_tools.bench.model",
    "butai_tools.bench.turn",
    "butai_tools.bench.answers",
    "butai_tools.bench.coldstart",
    "butai_tools.expression.commands",
    "butai_tools.bench.wake",
    "butai_tools.bench.push",
    "butai_tools.bench.voice",
)


def _optional_import(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only a missing *area* module is optional; a broken import inside it is a bug.
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            return None
        raise


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="butai", description="butai (舞台): characters on a stage")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = _optional_import(name)
        if module is not None:
            module.register(sub)
    bench = sub.add_parser("bench", help="run a benchmark and print its figures")
    bench_sub = bench.add_subparsers(dest="bench", metavar="BENCH")
    for name in BENCH_MODULES:
        module = _optional_import(name)
        if module is not None:
            module.register_bench(bench_sub)
    bench.set_defaults(func=lambda args: bench.print_help() or 2)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
