"""What `make run` tells a newcomer is true: the agent tools docs/agents.md shows work with the local run's
packages (or stop with one line saying how to get them), and `butai stage create` says where the keys are
kept."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


def _pins(file: str) -> set[str]:
    return {line.split("==")[0].strip().lower() for line in (ROOT / file).read_text().splitlines()
            if "==" in line and not line.lstrip().startswith("#")}


def test_the_mcp_server_comes_with_the_local_run():
    assert "mcp" in _pins("requirements-run.txt")


def test_butai_mcp_without_its_packages_says_how_to_get_them_in_one_line():
    # anyio is the first of the SDK's packages the MCP server imports: hide it, as a partial install would.
    code = ("import sys; sys.modules['anyio'] = None; from butai_tools.cli import main; "
            "sys.exit(main(['mcp']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "make run" in lines[0] and "requirements-run.txt" in lines[0], lines


def test_stage_create_says_where_the_keys_are_kept(local_runtime):
    env = {**os.environ, "BUTAI_LOCAL_JSON": str(local_runtime.state_dir / "local.json")}
    made = subprocess.run([sys.executable, "-m", "butai_tools.cli", "stage", "create", "keys-told"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert "the stage keeps only the keys' hashes" in made.stdout
    assert f"{local_runtime.state_dir / 'local.json'} (readable by you only)" in made.stdout
    assert "keeps only their hashes." not in made.stdout      # the old claim, untrue locally
    assert (local_runtime.state_dir / "local.json").stat().st_mode & 0o077 == 0
