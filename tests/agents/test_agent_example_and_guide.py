"""examples/hello_agent.py against the local runtime, and the guide's snippets."""
import json
import re
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT

GUIDE = ROOT / "docs" / "agents.md"


def wait_for(predicate, timeout=30, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise TimeoutError("condition not met")


@pytest.mark.e2e
def test_hello_agent_greets_waits_and_answers_with_another_expression(fresh_stage):
    proc = subprocess.Popen([sys.executable, str(ROOT / "examples" / "hello_agent.py"), "--stage", "agent",
                             "--timeout", "60", "--interval", "0.2"],
                            cwd=ROOT, env=fresh_stage.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8")
    try:
        greeting = wait_for(lambda: fresh_stage.view()["log"])
        assert greeting[0]["role"] == "character" and greeting[0]["expression"] == "smile"
        fresh_stage.reply("楽しかったよ")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "the player said: 楽しかったよ" in out
    log = fresh_stage.view()["log"]
    assert [e["role"] for e in log] == ["character", "player", "character"]
    answer = log[-1]
    assert "楽しかったよ" in answer["text"]
    assert answer["expression"] not in (None, "smile") and answer["expression"] == "surprised"


def test_hello_agent_says_how_to_start_the_stage_when_nothing_runs(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "BUTAI_LOCAL_JSON": str(tmp_path / "none.json")}
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "hello_agent.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "make run" in out.stderr


def code_blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)


def test_the_guide_mcp_config_runs_butai_mcp_with_its_variables():
    configs = [json.loads(block) for block in code_blocks("json") if "mcpServers" in block]
    assert configs, "the guide shows an mcpServers block"
    for config in configs:
        for server in config["mcpServers"].values():
            assert server["args"][-1] == "mcp" and server["command"].endswith("butai")
            assert set(server["env"]) in ({"BUTAI_LOCAL_JSON", "BUTAI_STAGE"},
                                          {"BUTAI_API_URL", "BUTAI_STAGE_ID", "BUTAI_AGENT_KEY"})


def test_the_guide_covers_curl_python_mcp_and_the_turn_loop():
    text = GUIDE.read_text(encoding="utf-8")
    for needle in ("curl", "/speak", "/fetch_replies", "from butai.client import Stage", "butai mcp",
                   "butai watch", "wait_for_replies", "examples/hello_agent.py", "not resident", "cost"):
        assert needle in text, needle
    from app import app
    posted = {path.rsplit("/", 1)[-1] for path, methods in app.routes.items() if "POST" in methods}
    for route in re.findall(r"-X POST \S+/stages/\S+?/(\w+)", text):
        assert route in posted, route
