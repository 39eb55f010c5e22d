"""`butai mcp` and its host killed around a reply (scripts/delivery_attacks.py's MCP kinds): the host is the
`mcp` package's own stdio client looping on `wait_for_replies`; its server is killed with SIGKILL 0–600 ms
after the player's reply (the host starts another and goes on), or the host itself is, beside a witness
host.  No reply is lost, and the live host never gets one twice.  The full run (100 of each) and its
figures are in docs/reliability.md."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e
KILLS = int(os.environ.get("BUTAI_MCP_ATTACK_KILLS", "3"))


def test_a_killed_mcp_server_or_host_loses_no_reply_and_the_live_host_gets_none_twice():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "delivery_attacks.py"), "--start", "--kills",
                           str(KILLS), "--kind", "mcp server killed", "--kind", "mcp host killed", "--seed", "5",
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    attacks = {a["kind"]: a for a in report["attacks"]}
    assert set(attacks) == {"mcp server killed", "mcp host killed"}
    for kind, attack in attacks.items():
        assert attack["agents_killed"] == KILLS and attack["replies"] == KILLS, kind
        assert attack["lost"] == 0 and attack["live_duplicates"] == 0 and attack["unexpected"] == 0, attack
    assert report["started"]["exit_status"] == 0
