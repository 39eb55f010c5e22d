"""`butai bench coldstart`: what a new Lambda instance pays before its first scenario turn.

Each sample is a new interpreter process, as a cold Lambda instance is.  It
imports the app (app.py, as Lambda does), builds the services, loads the
scenario and builds its interpreter, and answers one player reply through the
Chalice handler with an API Gateway event: the stage read, interpretation,
rules and the turn write, against the local stack (moto on 127.0.0.1, started
once by this command).  Side by side, alternating with it, the floor: a new
interpreter that imports boto3 and pydantic and nothing else.  Times run from
the parent's spawn of the process to each phase, on the system-wide monotonic
clock, so interpreter start-up is counted on both sides.

Bytecode: the children read it from a private cache (PYTHONPYCACHEPREFIX in a
temporary folder), written by one unmeasured warm-up process of each kind, so
the app's own modules are as compiled as the floor's boto3 and pydantic — as in
the Lambda package, which ships bytecode (infra/package.sh).  ``--source``
measures the app with only the standard library's bytecode instead (as the
Lambda runtime has it): every packaged module compiled from source, as in a
package without bytecode (the floor keeps its bytecode).

``--package build/package`` measures the deployment zip instead of the source
tree: unpacked once, both sides run by the Lambda runtime's Python
(lambda_runtime.py) with nothing else on the path and the function's
environment (butai_tools/packaged.py), the floor importing boto3 and pydantic
from the package, the app reading the package's own bytecode.  A third kind of
process per sample goes through SnapStart's order (packaged.py: start-up, the
before-snapshot hooks, the after-restore hooks, the first turn): what a
restored instance pays after Lambda's own restore is the hooks and the turn.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from chalicelib import env as names

# Each side reads its own CPU time where its work ends: not at exit, whose teardown (a final collection
# over every object) no instance pays before answering.
FLOOR_SCRIPT = "import time; import boto3, pydantic; print(time.monotonic(), time.process_time())"

# Run in the child: each phase's end on the monotonic clock, one JSON line on stdout.
APP_SCRIPT = r"""
import json, sys, time
marks = {"started": time.monotonic()}
import app
marks["import"] = time.monotonic()
from chalicelib import context
services = context.get()
marks["services"] = time.monotonic()
loaded = services.director.library.get(sys.argv[1])
marks["scenario"] = time.monotonic()
event = json.loads(sys.argv[2])
response = app.app(event, None)
marks["turn"] = time.monotonic()
cpu_at_turn = time.process_time()
if response["statusCode"] != 202:
    raise SystemExit(f"turn failed: {response['statusCode']} {response['body'][:300]}")
print(json.dumps({"marks": marks, "cpu_s": cpu_at_turn, "load_ms": loaded.load_ms, "build_ms": loaded.build_ms,
                  "from_cache": loaded.from_cache, "modules": len(sys.modules)}))
"""

PHASES = ("python start", "import app", "services", "scenario load", "interpreter build", "first turn")


def register_bench(sub) -> None:
    p = sub.add_parser("coldstart", help="a new process's import and first scenario turn, against the floor")
    p.add_argument("--samples", type=int, default=10, help="processes of each kind (default 10)")
    p.add_argument("--source", action="store_true",
                   help="the app without bytecode (a package without it): every module compiled from source")
    p.add_argument("--package", type=Path, metavar="DIR",
                   help="the packaged deployment.zip in DIR (infra/package.sh), run by the runtime's Python")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


def _reply_event(stage_id: str, player_key: str, text: str) -> dict:
    """An API Gateway (REST, proxy) event for POST /stages/{stage_id}/reply, as Lambda receives it."""
    from butai_tools.packaged import api_event
    return api_event("POST", "/stages/{stage_id}/reply", {"stage_id": stage_id}, player_key, {"text": text},
                     request_id="coldstart")


def _clean_env() -> dict:
    """This process's environment without butai's and AWS's settings: the bench measures the defaults."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("BUTAI_", "AWS_")) and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}


def _child_env(endpoint: str, region: str, bytecode: Path, write: bool = False) -> dict:
    env = _clean_env()
    # Bytecode is read from (and, for the warm-up, written to) this folder only, never the source tree.
    env.update({names.AWS_ENDPOINT: endpoint, "AWS_REGION": region, "PYTHONPYCACHEPREFIX": str(bytecode)})
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _floor(env: dict, root: Path, python: list[str] | None = None) -> tuple[float, float]:
    """Wall-clock ms to the end of the imports, and the process's CPU ms to there (less moved by other load)."""
    start = time.monotonic()
    out = subprocess.run([*(python or [sys.executable]), "-c", FLOOR_SCRIPT], cwd=root,
                         env=env, capture_output=True, text=True, check=True)
    done, cpu_s = (float(x) for x in out.stdout.split())
    return (done - start) * 1000, cpu_s * 1000


def _app(env: dict, root: Path, scenario_key: str, event: dict, python: list[str] | None = None) -> dict:
    start = time.monotonic()
    out = subprocess.run([*(python or [sys.executable]), "-c", APP_SCRIPT, scenario_key,
                          json.dumps(event, ensure_ascii=False)], cwd=root, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"cold-start sample failed: {out.stderr[-2000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    marks = got["marks"]
    scenario_ms = (marks["scenario"] - marks["services"]) * 1000
    phases = {
        "python start": (marks["started"] - start) * 1000,
        "import app": (marks["import"] - marks["started"]) * 1000,
        "services": (marks["services"] - marks["import"]) * 1000,
        # S3 read and compile vs the interpreter's indexes, as the library timed them.
        "scenario load": scenario_ms - got["build_ms"],
        "interpreter build": got["build_ms"],
        "first turn": (marks["turn"] - marks["scenario"]) * 1000,
    }
    return {"phases": phases, "total_ms": (marks["turn"] - start) * 1000, "cpu_ms": got["cpu_s"] * 1000,
            "from_cache": got["from_cache"],
            "modules": got["modules"]}


def _keep_stdlib_bytecode(compiled: Path, target: Path) -> None:
    """Copies the standard library's part of a bytecode cache (the cache mirrors absolute source paths)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    source = compiled / stdlib.relative_to(stdlib.anchor)
    shutil.copytree(source, target / stdlib.relative_to(stdlib.anchor),
                    ignore=shutil.ignore_patterns("site-packages"))


def _packaged_env(settings) -> dict:
    from butai_tools import packaged
    from chalicelib import env as names
    return packaged.function_environment({
        names.AWS_ENDPOINT: settings.aws_endpoint, names.TABLE_CURRENT: settings.table_current,
        names.TABLE_LOG: settings.table_log, names.TABLE_PENDING: settings.table_pending,
        names.BUCKET: settings.bucket, names.DEPLOYMENT_STAGE: "prod", names.DEFAULT_CHARACTER: "hiyori"})


def run_bench(samples: int, source: bool = False, package: Path | None = None) -> dict:
    from butai_tools import lambda_runtime, packaged
    from butai_tools.local.aws import LocalAws, ensure_resources
    from butai_tools.local.runtime import ROOT, STATIC
    from butai_tools.stage import images
    from chalicelib import aws, context
    from chalicelib.config import Settings
    runtime_python = None
    if package is not None:
        if source:
            raise ValueError("--source measures the source tree; the package ships its bytecode")
        runtime_python = lambda_runtime.find_python()
        if runtime_python is None:
            raise RuntimeError(f"no Python {lambda_runtime.PYTHON} here (see `python -m butai_tools.lambda_runtime python`)")
    with tempfile.TemporaryDirectory(prefix="butai-coldstart-") as tmp:
        local_aws = LocalAws().start()
        try:
            # The settings the measured process reads (_child_env), read the same way.
            settings = Settings.from_env(_clean_env()).with_(aws_endpoint=local_aws.endpoint)
            ensure_resources(settings)
            images.upload_all_characters(aws.client("s3", settings), settings.bucket, STATIC / "characters")
            services = context.build(settings)
            director = services.director
            key = director.library.put(ROOT / "scenarios" / "chinoike.json")
            compiled, stdlib_only = Path(tmp) / "compiled", Path(tmp) / "stdlib-only"
            root, python = ROOT, None
            if package is not None:
                # The package as Lambda has it: run in its folder, no bytecode written, nothing but it and
                # the standard library on the path (packaged.FLAGS and the function's environment only).
                root = packaged.unpack(package / "deployment.zip", Path(tmp) / "task")
                python = [runtime_python, *packaged.FLAGS]
            floors, apps, restored = [], [], []
            runtime_dir = packaged.runtime_modules(Path(tmp) / "runtime") if python else None
            # One sample of each, unmeasured: it writes the bytecode, and pays for the disk cache.
            warm_env = _packaged_env(settings) if python else _child_env(local_aws.endpoint, settings.region,
                                                                           compiled, write=True)
            _floor(warm_env, root, python)
            warm = director.create("coldstart-warm", key)
            _app(warm_env, root, key, _reply_event(warm.stage_id, warm.player_key, "こんばんは"), python)
            env = _packaged_env(settings) if python else _child_env(local_aws.endpoint, settings.region, compiled)
            app_env = env
            if source:
                _keep_stdlib_bytecode(compiled, stdlib_only)
                app_env = _child_env(local_aws.endpoint, settings.region, stdlib_only)
            for i in range(samples):
                created = director.create(f"coldstart-{i}", key)
                floors.append(_floor(env, root, python))
                apps.append(_app(app_env, root, key, _reply_event(created.stage_id, created.player_key, "こんばんは"),
                                 python))
                if python:
                    snapped = director.create(f"coldstart-snapstart-{i}", key)
                    run = packaged.run(runtime_python, root, runtime_dir, [
                        _reply_event(snapped.stage_id, snapped.player_key, "こんばんは")], env, snapstart=True)
                    if run.responses[0]["statusCode"] != 202:
                        raise RuntimeError(f"restored turn failed: {run.responses[0]['body'][:300]}")
                    marks, cpu = run.marks, run.cpu
                    restored.append({"before_snapshot": (marks["snapshot"] - marks["import"]) * 1000,
                                     "after_restore": (marks["restore"] - marks["snapshot"]) * 1000,
                                     "first_turn": (marks["first_response"] - marks["restore"]) * 1000,
                                     "first_turn_cpu": (cpu["first_response"] - cpu["restore"]) * 1000})
        finally:
            context.use(None)
            local_aws.stop()
    floor = statistics.median(f[0] for f in floors)
    floor_cpu = statistics.median(f[1] for f in floors)
    total = statistics.median(a["total_ms"] for a in apps)
    total_cpu = statistics.median(a["cpu_ms"] for a in apps)
    return {
        "samples": samples,
        "code": (f"the deployment zip under Python {lambda_runtime.PYTHON} ({runtime_python})" if package is not None
                 else f"the source tree under Python {sys.version_info[0]}.{sys.version_info[1]}"),
        "app_bytecode": "standard library only (the rest compiled from source)" if source else "compiled",
        "floor_ms": round(floor, 1),
        "first_turn_total_ms": round(total, 1),
        "overhead_ms": round(total - floor, 1),
        # The measure: what the first turn adds over the floor, in floors (target <= 2).
        "overhead_ratio": round((total - floor) / floor, 2),
        "ratio": round(total / floor, 2),
        # CPU time of each process up to its end mark: what other load on the machine moves least,
        # so versions of the code compare best on it.
        "floor_cpu_ms": round(floor_cpu, 1),
        "first_turn_cpu_ms": round(total_cpu, 1),
        "cpu_ratio": round(total_cpu / floor_cpu, 2),
        "cpu_overhead_ratio": round((total_cpu - floor_cpu) / floor_cpu, 2),
        "phases_ms": {name: round(statistics.median(a["phases"][name] for a in apps), 1) for name in PHASES},
        "scenario_from_cache": all(a["from_cache"] for a in apps),
        "modules_loaded": statistics.median(a["modules"] for a in apps),
        # SnapStart (package only): the hooks and the first turn after them, medians of wall-clock ms (and the
        # first turn's CPU ms: the restored instance's own work, to set against first_turn_cpu_ms).
        "snapstart_ms": {name: round(statistics.median(r[name] for r in restored), 1)
                         for name in ("before_snapshot", "after_restore", "first_turn", "first_turn_cpu")}
        if restored else None,
        "floor_samples_ms": [round(f[0], 1) for f in floors],
        "total_samples_ms": [round(a["total_ms"], 1) for a in apps],
    }


def _run(args) -> int:
    report = run_bench(args.samples, source=args.source, package=args.package)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return 0
    print(f"butai bench coldstart: {report['samples']} new processes of each kind, alternating; medians")
    print(f"code: {report['code']}; app bytecode: {report['app_bytecode']}")
    print(f"floor (python + import boto3, pydantic)  {report['floor_ms']:8.1f} ms")
    for name, ms in report["phases_ms"].items():
        print(f"  {name:<38} {ms:8.1f} ms")
    print(f"first scenario turn, from process start  {report['first_turn_total_ms']:8.1f} ms  "
          f"= {report['ratio']:.2f}x the floor ({report['overhead_ms']:+.0f} ms)")
    print(f"overhead over the floor                   {report['overhead_ratio']:8.2f} floors")
    print(f"CPU time of the processes: floor {report['floor_cpu_ms']:.0f} ms, first turn "
          f"{report['first_turn_cpu_ms']:.0f} ms = {report['cpu_ratio']:.2f}x "
          f"(overhead {report['cpu_overhead_ratio']:.2f} floors)")
    if report["snapstart_ms"]:
        snap = report["snapstart_ms"]
        print(f"SnapStart's order: before-snapshot hooks {snap['before_snapshot']:.0f} ms (at publish), after a "
              f"restore: hooks {snap['after_restore']:.1f} ms, first turn {snap['first_turn']:.0f} ms "
              f"({snap['first_turn_cpu']:.0f} ms CPU)")
    print(f"scenario's derived results read, kept beside it: {'yes' if report['scenario_from_cache'] else 'no'}; "
          f"modules loaded: {report['modules_loaded']:g}")
    return 0
