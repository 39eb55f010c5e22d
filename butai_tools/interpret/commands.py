"""`butai eval-interpret SCENARIO DATASET [--backend B] [--repeat N] [--json]`."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from butai_tools.interpret.evaluation import (
    format_report,
    load_for_command,
    run_dataset,
    summarise,
)
from chalicelib.config import Settings
from chalicelib.context import build_models
from chalicelib.interpret.backends import BACKENDS
from chalicelib.interpret.interpreter import Interpreter


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval-interpret", help="measure input interpretation against a set of cases",
        description="Play each case's setup from a new game, interpret its text with the chosen backend and "
                    "compare with the expected input.  Prints a per-case table, accuracy, unsafe results, "
                    "per-input precision and recall, confusions, agreement across repeats, latency and misses "
                    "by kind (narrowed, classifier, refinement).")
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario JSON file")
    parser.add_argument("dataset", metavar="DATASET", help="evaluation set JSON file")
    parser.add_argument("--backend", choices=BACKENDS, default=None,
                        help="classifier backend (default: BUTAI_CLASSIFIER, else lexical)")
    parser.add_argument("--repeat", type=int, default=1, help="interpret each case N times (agreement)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    parser.add_argument("--split", default=None, help="only the cases of this split (e.g. dev, heldout)")
    parser.add_argument("--plain-words", action="store_true",
                        help="word narrowing by raw substrings (no variants), for comparison")
    parser.add_argument("--no-refine", action="store_true", help="skip the refinement rules, for comparison")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per backend call")
    parser.add_argument("--context-limit", type=int, default=None, help="model context in tokens")
    parser.add_argument("--endpoint", default=None, help="SageMaker endpoint name (sagemaker)")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (openai)")
    parser.add_argument("--model", default=None, help="model name (openai, sagemaker)")
    parser.add_argument("--model-path", default=None, help="local model directory (transformers)")
    parser.add_argument("--min-accuracy", type=float, default=None, help="exit 1 when accuracy is lower")
    parser.add_argument("--max-unsafe", type=int, default=None, help="exit 1 when more cases are unsafe")
    parser.set_defaults(func=run_eval)
    from butai_tools.interpret.suggest import register as register_suggest
    register_suggest(subparsers)


def _backend(args: argparse.Namespace):
    """The classifier the settings build, with this command's options as explicit overrides."""
    settings = Settings.from_env()
    if args.backend:
        settings = settings.with_models(classifier=args.backend)
    name = settings.models.classifier.name or ""
    model = name.split("+")[-1]
    overrides: dict[str, Any] = {"classifier_timeout": args.timeout, "context_limit": args.context_limit,
                                 "sagemaker_endpoint": args.endpoint, "openai_base_url": args.base_url,
                                 "transformers_model": args.model_path}
    if args.model and model in ("openai", "sagemaker"):
        overrides[f"{model}_model"] = args.model
    settings = settings.with_models(**{k: v for k, v in overrides.items() if v is not None})
    backend = build_models(settings).classifier()
    if getattr(backend, "name", "") == "lexical" and args.plain_words:
        from chalicelib.interpret.backends.lexical import LexicalBackend
        backend = LexicalBackend(variant_words=False)
    return backend


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        width = 30
        filled = int(width * done / max(1, total))
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\r" + " " * (width + 24) + "\r")
        sys.stderr.flush()


def run_eval(args: argparse.Namespace) -> int:
    loaded = load_for_command("eval-interpret", args.scenario, args.dataset, args.split)
    if isinstance(loaded, int):
        return loaded
    rules, dataset = loaded
    if args.split and not dataset.cases:
        print(f"butai eval-interpret: no case has split {args.split!r}", file=sys.stderr)
        return 2
    if args.repeat < 1:
        print("butai eval-interpret: --repeat must be at least 1", file=sys.stderr)
        return 2
    try:
        backend = _backend(args)
    except (ValueError, TypeError) as exc:
        print(f"butai eval-interpret: {exc}", file=sys.stderr)
        return 2
    interpreter = Interpreter(rules, backend, variant_words=not args.plain_words, refine=not args.no_refine)
    results = run_dataset(interpreter, dataset, repeat=args.repeat, progress=_Progress())
    summary = summarise(results, repeat=args.repeat)
    name = getattr(backend, "name", "?")
    if args.json:
        out = {"backend": name, "scenario": args.scenario, "dataset": args.dataset,
               "variant_words": not args.plain_words, "refine": not args.no_refine, **summary,
               "cases": [r.to_dict() for r in results]}
        print(json.dumps(out, ensure_ascii=False, indent=1))
    else:
        print(format_report(results, summary, backend=name))
    if args.min_accuracy is not None and summary["accuracy"] < args.min_accuracy:
        return 1
    if args.max_unsafe is not None and summary["unsafe"] > args.max_unsafe:
        return 1
    return 0
