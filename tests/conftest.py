"""Shared fixtures: settings, stores and services for each test layer.

- unit: the service over the in-memory store (no AWS at all)
- functional / api: the DynamoDB store over moto's in-process mock (`mock_aws`)
- e2e / browser: the real local runtime in a subprocess, over real sockets
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUTPUT = ROOT / "test-output"

from chalicelib import coldstart, context  # noqa: E402
from chalicelib.config import Settings  # noqa: E402
from chalicelib.llm import breaker  # noqa: E402
from chalicelib.stage.catalog import CharacterCatalog  # noqa: E402
from chalicelib.stage.service import StageService  # noqa: E402
from tests.memory_store import MemoryStageStore  # noqa: E402

HIYORI = {"id": "hiyori", "name": "ひより",
          "expressions": {k: f"{k}.svg" for k in ("neutral", "smile", "troubled", "surprised",
                                                   "embarrassed", "determined")}}


@pytest.fixture
def catalog():
    return CharacterCatalog(lambda c: HIYORI if c == "hiyori" else None)


@pytest.fixture
def memory_store():
    return MemoryStageStore()


@pytest.fixture
def service(memory_store, catalog):
    return StageService(memory_store, catalog)


@pytest.fixture
def aws_settings(monkeypatch):
    """moto's in-process mock with the tables, the bucket and the default character."""
    from moto import mock_aws

    from butai_tools.local.aws import ensure_resources
    from butai_tools.stage import images
    from chalicelib import aws
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings()
    with mock_aws():
        ensure_resources(settings)
        images.upload_all_characters(aws.client("s3", settings), settings.bucket, ROOT / "static/characters")
        yield settings


@pytest.fixture(autouse=True)
def _collector_back_on():
    # Importing app.py pauses the cyclic collector until its first request (chalicelib/coldstart.py);
    # a test that imports it without a request must not leave a long test process without one.
    yield
    coldstart.settle()


@pytest.fixture(autouse=True)
def _no_circuit_breakers_carried_over():
    # A model server's circuit breaker lives as long as the process (chalicelib/llm/breaker.py): failures a
    # test provokes on purpose must not leave the next test's backend unasked, nor its listener (the metrics,
    # which in Lambda's format make a Powertools logger that later tests would inherit) run after the test.
    yield
    breaker.forget(listeners=True)


@pytest.fixture
def services(aws_settings):
    built = context.build(aws_settings)
    context.use(built)
    yield built
    context.use(None)


@pytest.fixture
def client(services):
    from chalice.test import Client

    from app import app
    with Client(app) as test_client:
        yield test_client


@pytest.fixture
def stage(services):
    return services.stage.create_stage("test")


def call(api, method, path, key=None, body=None, headers=None):
    """One HTTP request over a real socket: (status, headers, JSON body or None)."""
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    if key:
        hdrs["Authorization"] = f"Bearer {key}"
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    req = urllib.request.Request(api + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            return resp.status, dict(resp.headers), json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, dict(err.headers), json.loads(raw) if raw else None


def auth(key: str) -> dict:
    return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


class LocalProcess:
    """`butai run` in a subprocess, on an ephemeral port and its own state folder."""

    def __init__(self, state_dir: Path, env: dict | None = None):
        self.state_dir = state_dir
        self.env = env or {}
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}

    def start(self, timeout: float = 60) -> dict:
        # Tests hammer one key from many threads; the rate limit has tests of its own.
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "BUTAI_LOCAL_RATE": "0", **self.env}
        self.log = open(self.state_dir.parent / f"{self.state_dir.name}.log", "ab")
        atexit.register(self.kill_if_running)  # a failed test must not leave a runtime behind
        self.proc = subprocess.Popen([sys.executable, "-m", "butai_tools.cli", "run", "--port", "0",
                                      "--state-dir", str(self.state_dir)],
                                     cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        path = self.state_dir / "local.json"
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"butai run exited with {self.proc.returncode}")
            if path.exists():
                info = json.loads(path.read_text(encoding="utf-8"))
                if info.get("pid") == self.proc.pid:
                    self.info = info
                    return info
            time.sleep(0.1)
        raise TimeoutError("butai run did not start")

    def kill_if_running(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()

    def stop(self, sig=signal.SIGTERM, timeout: float = 90) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        self.log.close()
        return code


@pytest.fixture(scope="session")
def local_runtime(tmp_path_factory):
    runtime = LocalProcess(tmp_path_factory.mktemp("local") / "state")
    runtime.start()
    yield runtime
    assert runtime.stop() == 0
