"""scripts/load_test.py: a short run against a local stage it starts itself, and its loopback-only guard."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "load_test.py"
pytestmark = pytest.mark.e2e


def test_a_short_run_loses_nothing(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--start", "--seconds", "8", "--players", "4",
                           "--agents", "2", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["errors"] == 0, report["error_samples"]
    replies = report["replies"]
    assert replies["sent"] >= 4                     # every player replies at least once
    assert replies["lost"] == replies["duplicated"] == replies["unexpected"] == replies["text_mismatch"] == 0
    assert replies["fetched"] == replies["fetched_unique"] == replies["sent"]
    routes = report["routes"]
    assert set(routes) == {"GET /stages/{id}", "POST /stages/{id}/reply", "POST /stages/{id}/speak",
                           "POST /stages/{id}/fetch_replies"}
    for name, row in routes.items():
        assert row["count"] > 0 and row["errors"] == 0, name
        assert 0 < row["p50_ms"] <= row["p99_ms"] <= row["max_ms"], name
    # it stopped the stage it started, cleanly, and left no process behind
    assert report["started"]["exit_status"] == 0
    with pytest.raises(ProcessLookupError):
        os.kill(report["started"]["pid"], 0)


@pytest.mark.parametrize("url", ["http://10.1.2.3:8000", "https://127.0.0.1:8000", "http://localhost.example:80"])
def test_it_refuses_a_stage_that_is_not_on_loopback(tmp_path, url):
    local = tmp_path / "local.json"
    local.write_text(json.dumps({"api_url": url, "aws_endpoint": "http://127.0.0.1:1", "stages": {}}),
                     encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCRIPT), "--local-json", str(local), "--seconds", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "only talks to a local stage" in done.stderr
    assert "Traceback" not in done.stderr
