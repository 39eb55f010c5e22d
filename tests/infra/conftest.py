"""The package `infra/package.sh` builds, once per test session.

The build (the runtime's wheels, chalice, bytecode, cfn-lint) takes a minute or more, and two test files
read it (test_package.py, test_packaged_zip.py), which xdist may run in different workers: the first
worker to ask builds it into the session's shared temporary folder under a file lock, the others wait
and read the same result.  Each session builds afresh.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("BUTAI_VENV_BIN", ROOT / ".venv" / "bin"))


def pypi_reachable() -> bool:
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/")
    try:
        with urllib.request.urlopen(f"{index}/pip/", timeout=8):
            return True
    except (urllib.error.URLError, OSError):
        return False


def _session_folder(tmp_path_factory) -> Path:
    # Under xdist each worker has its own basetemp below one folder of this session.
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def packaged(tmp_path_factory):
    """(OUTDIR, result) of `infra/package.sh prod OUTDIR`; result holds returncode, stdout, stderr."""
    shared = _session_folder(tmp_path_factory) / "lambda-package"
    shared.mkdir(exist_ok=True)
    out, done = shared / "package", shared / "result.json"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            env = {**os.environ, "BUTAI_VENV_BIN": str(BIN)}
            run = subprocess.run([str(ROOT / "infra" / "package.sh"), "prod", str(out)], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=900)
            done.write_text(json.dumps({"returncode": run.returncode, "stdout": run.stdout,
                                        "stderr": run.stderr}), encoding="utf-8")
    result = json.loads(done.read_text(encoding="utf-8"))
    if not (out / "sam.json").exists():
        if not pypi_reachable():
            pytest.skip("packaging needs PyPI for the Lambda's wheels, and PyPI is unreachable here")
        pytest.fail(f"infra/package.sh failed ({result['returncode']}):\n{result['stdout']}\n{result['stderr']}")
    return out, result


@pytest.fixture(scope="session")
def sam(packaged):
    out, _ = packaged
    return json.loads((out / "sam.json").read_text(encoding="utf-8"))
