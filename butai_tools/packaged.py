"""The deployment zip run as Lambda runs it, on this machine.

The zip is unpacked into an empty folder (Lambda's /var/task) and its handler is imported by an
interpreter of the runtime's Python version (lambda_runtime.find_python) with ``-s -S -B`` (no
site-packages, no bytecode written: /var/task is read-only), run in that folder with the function's
environment only, not this machine's: so nothing is on the path but the package (the working folder, the
path's first entry), a folder standing for the runtime's own modules (``snapshot_restore_py``, through
PYTHONPATH as Lambda's runtime sets it) and the interpreter's standard library.  The driver reports every
module it loaded from anywhere else, so a package that only works because of something installed here fails.

With ``snapstart=True`` the driver goes through SnapStart's order before the first event: the
import (start-up), the before-snapshot hooks in the reverse order of their registration, then the
after-restore hooks in order, as the runtime calls them.

Used by the packaged-zip test (tests/infra/test_packaged_zip.py) and ``butai bench coldstart --package``.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from butai_tools import lambda_runtime

# No site-packages (-s -S), no bytecode written (-B); the path is the working folder, PYTHONPATH, the stdlib.
FLAGS = ("-s", "-S", "-B")

# Runs in the runtime's interpreter, in the task root: argv = handler, mode; stdin = the events.
DRIVER = r"""
import time
started = time.monotonic()
import importlib, json, os, sys, sysconfig
handler, mode = sys.argv[1:3]
task_root, runtime_dir = os.getcwd(), os.environ["PYTHONPATH"]


class Context:
    # What Lambda passes as the handler's second argument.
    function_name = "APIHandler"
    function_version = "1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:APIHandler:live"
    memory_limit_in_mb = 1024
    aws_request_id = "packaged-zip"
    log_group_name = "/aws/lambda/APIHandler"
    log_stream_name = "packaged-zip"

    def get_remaining_time_in_millis(self):
        return 30000


events = json.loads(sys.stdin.read())
module_name, attribute = handler.rsplit(".", 1)
function = getattr(importlib.import_module(module_name), attribute)
marks = {"started": started, "import": time.monotonic()}
cpu = {"import": time.process_time()}
hooks = None
if mode == "snapstart":
    import snapshot_restore_py as runtime
    before, after = runtime.get_before_snapshot(), runtime.get_after_restore()
    hooks = {"before_snapshot": [f.__module__ + "." + f.__name__ for f, _, _ in before],
             "after_restore": [f.__module__ + "." + f.__name__ for f, _, _ in after]}
    for func, args, kwargs in reversed(before):
        func(*args, **kwargs)
    marks["snapshot"], cpu["snapshot"] = time.monotonic(), time.process_time()
    for func, args, kwargs in after:
        func(*args, **kwargs)
    marks["restore"], cpu["restore"] = time.monotonic(), time.process_time()
responses = []
for event in events:
    responses.append(function(event, Context()))
    marks.setdefault("first_response", time.monotonic())
    cpu.setdefault("first_response", time.process_time())
allowed = (task_root, runtime_dir, sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"])
elsewhere = sorted(name for name, module in list(sys.modules.items())
                   if getattr(module, "__file__", None) and not os.path.abspath(module.__file__).startswith(allowed))
path = [os.path.abspath(p) for p in sys.path]
print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "path": path, "marks": marks,
                  "cpu": cpu, "hooks": hooks, "responses": responses, "elsewhere": elsewhere,
                  "modules": len(sys.modules)}))
"""


@dataclass
class Run:
    python: str                       # the interpreter's version
    path: list[str]                   # its sys.path
    responses: list[dict]             # the handler's answers, one per event
    elsewhere: list[str]              # modules loaded from outside the package and the standard library
    hooks: dict | None                # the SnapStart hooks found registered, by name
    marks: dict[str, float]           # monotonic times: started, import, [snapshot, restore], first_response
    cpu: dict[str, float]             # the process's CPU seconds at the same marks (from import on)
    modules: int


def unpack(package: Path, task_root: Path) -> Path:
    """Unpacks the deployment zip into ``task_root``, which must not exist yet (or be empty)."""
    task_root.mkdir(parents=True, exist_ok=True)
    if any(task_root.iterdir()):
        raise ValueError(f"{task_root} is not empty")
    with zipfile.ZipFile(package) as archive:
        archive.extractall(task_root)
    return task_root


def runtime_modules(folder: Path) -> Path:
    """A folder with what the managed runtime adds to the path: ``snapshot_restore_py`` (the library
    Lambda's Python runtimes include; from this machine's development environment)."""
    import snapshot_restore_py
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(snapshot_restore_py.__file__, folder / "snapshot_restore_py.py")
    return folder


def function_environment(extra: dict[str, str]) -> dict[str, str]:
    """What Lambda sets for a function (the parts the code or the interpreter read), plus ``extra``:
    the function's own variables."""
    return {"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "packaged", "AWS_SECRET_ACCESS_KEY": "packaged",
            "AWS_LAMBDA_FUNCTION_NAME": "APIHandler", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{lambda_runtime.RUNTIME}",
            "LAMBDA_TASK_ROOT": lambda_runtime.TASK_ROOT, "LANG": "C.UTF-8", "TZ": ":UTC", **extra}


def run(python: str, task_root: Path, runtime_dir: Path, events: list[dict], env: dict[str, str],
        handler: str = "app.app", snapstart: bool = False, timeout: float = 300) -> Run:
    """Calls the packaged handler with ``events`` in one new process; raises with its output on failure."""
    command = [python, *FLAGS, "-c", DRIVER, handler, "snapstart" if snapstart else "on-demand"]
    out = subprocess.run(command, input=json.dumps(events), env={**env, "PYTHONPATH": str(runtime_dir)},
                         cwd=task_root, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"the packaged handler failed ({out.returncode}):\n{out.stderr[-4000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(python=got["python"], path=got["path"], responses=got["responses"], elsewhere=got["elsewhere"],
               hooks=got["hooks"], marks=got["marks"], cpu=got["cpu"], modules=got["modules"])


def api_event(method: str, resource: str, params: dict[str, str], key: str | None = None,
              body: dict | None = None, request_id: str = "packaged-zip") -> dict:
    """An API Gateway (REST, proxy) event as Lambda receives it: ``resource`` is the route
    (`/stages/{stage_id}/reply`), ``params`` its path parameters."""
    path = resource.format(**params)
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return {
        "resource": resource, "path": path, "httpMethod": method, "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": None, "multiValueQueryStringParameters": None,
        "pathParameters": params, "stageVariables": None,
        "requestContext": {"resourcePath": resource, "httpMethod": method, "path": f"/api{path}",
                           "stage": "api", "requestId": request_id},
        "body": None if body is None else json.dumps(body, ensure_ascii=False), "isBase64Encoded": False,
    }
