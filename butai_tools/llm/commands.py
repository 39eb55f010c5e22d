"""`butai doctor [--base-url URL] [--model NAME] [--mode MODE] [--json]`."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from chalicelib import env as names
from chalicelib.llm.choice import MODE_SETTINGS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor", help="say which model backends are configured and make one test call of each",
        description="Builds the classifier and free conversation as the services would, from the settings "
                    "(BUTAI_MODEL_URL, BUTAI_MODEL, BUTAI_CLASSIFIER, BUTAI_GENERATOR …) and the options "
                    "below, makes one test call "
                    "of each and says what is wrong: an unreachable server, a missing model, a server that "
                    "ignores constraints.  Exit status 1 when a configured model does not answer.")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible base URL (overrides BUTAI_MODEL_URL)")
    parser.add_argument("--model", default=None, help="model name (overrides BUTAI_MODEL)")
    parser.add_argument("--mode", choices=MODE_SETTINGS, default=None, help="constrained-choice mode")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.set_defaults(func=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from butai_tools.llm.doctor import diagnose
    from chalicelib.config import Settings
    from chalicelib.llm.settings import keyword
    overrides = {keyword(name): value for name, value in ((names.MODEL_URL, args.base_url), (names.MODEL, args.model),
                                                          (names.MODEL_MODE, args.mode)) if value}
    try:
        settings = Settings.from_env().with_models(**overrides)
    except ValueError as exc:
        print(f"FAIL settings: {exc}", file=sys.stderr)
        return 1
    checks = diagnose(settings)
    if args.json:
        print(json.dumps([c.to_dict() for c in checks], ensure_ascii=False, indent=1))
    else:
        print("\n".join(c.line() for c in checks))
    return 0 if all(c.ok for c in checks) else 1
