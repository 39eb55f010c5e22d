"""`butai run`, and how other commands find the local runtime."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from butai.config import LOCAL_JSON  # the agent side owns the file name
from butai_tools import env as tool_env
from chalicelib.config import Settings


def register(sub) -> None:
    run = sub.add_parser("run", help="run the local stage (moto + API + page) until Ctrl-C")
    run.add_argument("--port", type=int, default=int(os.environ.get(tool_env.PORT, "8000")))
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--state-dir", type=Path, default=None, help="where data and local.json live (.butai)")
    run.set_defaults(func=_run)


def _run(args) -> int:
    from butai_tools.local.runtime import LocalRuntime, run_forever
    runtime = LocalRuntime(host=args.host, port=args.port)
    if args.state_dir:
        runtime.state_dir = args.state_dir
    return run_forever(runtime)


def local_json_path() -> Path:
    return Path(os.environ.get(tool_env.LOCAL_JSON, LOCAL_JSON))


def read_local_json(path: Path | None = None) -> dict:
    path = path or local_json_path()
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def target_settings(use_aws: bool = False) -> tuple[Settings, dict | None]:
    """Settings for an operator command: real AWS when asked, else the running local runtime (the same
    settings, pointed at its local AWS)."""
    settings = Settings.from_env()
    if use_aws or settings.aws_endpoint:
        return settings, None
    local = read_local_json()
    if not local.get("aws_endpoint"):
        sys.exit("butai: the local stage is not running; start it with `make run` "
                 "(or pass --aws to work on the AWS deployment named by the BUTAI_* variables)")
    return settings.with_(aws_endpoint=local["aws_endpoint"]), local
