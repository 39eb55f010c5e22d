"""scripts/delivery_attacks.py, briefly: agents of four kinds killed while the player answers (a curl long-poll,
the Python client, `butai watch`, a connection dropped after a plain fetch) lose no reply, and no reply is
handed to two live agents.  The full run (20 of each) and its figures are in docs/reliability.md."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e
KILLS = int(os.environ.get("BUTAI_ATTACK_KILLS", "4"))


def test_killed_agents_lose_no_reply_and_no_live_agent_gets_one_twice():
    kinds = [arg for kind in ("curl long-poll", "python client", "butai watch", "dropped connection")
             for arg in ("--kind", kind)]       # the MCP kinds: tests/agents/test_agent_mcp_kills.py
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "delivery_attacks.py"), "--start", "--kills",
                           str(KILLS), *kinds, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    attacks = {a["kind"]: a for a in report["attacks"]}
    assert set(attacks) == {"curl long-poll", "python client", "butai watch", "dropped connection"}
    for kind, attack in attacks.items():
        assert attack["agents_killed"] == KILLS and attack["replies"] == KILLS, kind
        assert attack["lost"] == 0 and attack["live_duplicates"] == 0 and attack["unexpected"] == 0, attack
    # A long-poll whose caller is gone claims nothing: its reply is handed out the first time to a live agent.
    assert attacks["curl long-poll"]["claimed_for_nobody"] == 0
    assert report["started"]["exit_status"] == 0


def test_it_refuses_a_stage_that_is_not_on_loopback(tmp_path):
    local = tmp_path / "local.json"
    local.write_text(json.dumps({"api_url": "http://10.1.2.3:8000", "aws_endpoint": "http://10.1.2.3:1",
                                 "stages": {}}))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "delivery_attacks.py"), "--local-json", str(local),
                           "--kills", "1"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not http://127.0.0.1" in done.stderr
