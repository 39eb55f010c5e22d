"""`butai speak`, `butai replies` and `butai watch` against the local runtime."""
import io
import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from butai_tools.cli import main
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


@pytest.fixture
def cli(fresh_stage, monkeypatch, capsys):
    for var in ("BUTAI_API_URL", "BUTAI_AGENT_KEY", "BUTAI_STAGE_ID", "BUTAI_STAGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BUTAI_LOCAL_JSON", str(fresh_stage.local_json))

    def run(*argv):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_speak_by_local_name_then_replies_once(cli, fresh_stage):
    code, out, err = cli("speak", "agent", "シェルから", "--expression", "smile")
    assert code == 0, err
    assert out.startswith("spoke ") and "(smile)" in out
    current = fresh_stage.view()["current"]
    assert (current["text"], current["expression"]) == ("シェルから", "smile")
    fresh_stage.reply("見えた")
    fresh_stage.reply("二行\n目")
    code, out, err = cli("replies", "agent")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].endswith("  見えた") and lines[1].endswith("  二行 ⏎ 目")
    assert cli("replies", "agent") == (0, "", "")


def test_speak_json_speaker_request_id_and_unknown_expression(cli, fresh_stage):
    args = ("speak", "agent", "やあ", "-e", "sparkly", "--speaker", "語り手", "--request-id", "r-1", "--json")
    code, out, err = cli(*args)
    assert code == 0
    result = json.loads(out)
    assert result["asked_expression"] == "sparkly" and result["expression"] == "neutral"
    assert "'sparkly' is not available; shown as 'neutral'" in err
    assert cli(*args)[1] == out  # the same line, not a new one
    code, _, err = cli("speak", "agent", "違う", "--request-id", "r-1")
    assert code == 1 and "409 request_id_reused" in err
    log = fresh_stage.view()["log"]
    assert len(log) == 1 and log[0]["speaker"] == "語り手"
    fresh_stage.reply("json")
    code, out, _ = cli("replies", "agent", "--json")
    assert [r["text"] for r in json.loads(out)] == ["json"] and set(json.loads(out)[0]) == {"id", "text", "deliveries", "lease_expires_at",
                                                                                           "created_at"}


def test_stage_id_with_flags_or_environment(cli, fresh_stage, monkeypatch, tmp_path):
    monkeypatch.setenv("BUTAI_LOCAL_JSON", str(tmp_path / "none.json"))
    code, _, err = cli("speak", fresh_stage.stage_id, "フラグで", "--api-url", fresh_stage.api_url,
                       "--key", fresh_stage.agent_key)
    assert code == 0, err
    monkeypatch.setenv("BUTAI_API_URL", fresh_stage.api_url)
    monkeypatch.setenv("BUTAI_AGENT_KEY", fresh_stage.agent_key)
    monkeypatch.setenv("BUTAI_STAGE_ID", fresh_stage.stage_id)
    assert cli("speak", "環境変数で")[0] == 0  # STAGE left out: BUTAI_STAGE_ID
    monkeypatch.setattr(sys, "stdin", io.StringIO("標準入力から\n"))
    assert cli("speak", "-", "-e", "troubled")[0] == 0
    assert [e["text"] for e in fresh_stage.view()["log"]] == ["フラグで", "環境変数で", "標準入力から"]
    fresh_stage.reply("env")
    assert cli("replies")[1].endswith("  env\n")


def test_errors_are_one_line_on_stderr_with_a_nonzero_exit(cli, fresh_stage, monkeypatch, tmp_path):
    code, out, err = cli("speak", "agent", "x", "--key", fresh_stage.player_key)
    assert code == 1 and out == ""
    assert err.startswith("butai: 403 agent_key_required: ") and err.endswith(" (field: Authorization)\n")
    assert err.count("\n") == 1
    code, _, err = cli("replies", "agent", "--key", "bka_wrong")
    assert code == 1 and err.startswith("butai: 401 wrong_key:") and err.count("\n") == 1
    code, _, err = cli("speak", "agent", "x" * 2001)
    assert code == 1 and "400 invalid_request" in err and "(field: text)" in err
    code, _, err = cli("speak", "nosuch", "x")
    assert code == 2 and err.startswith("butai: unknown stage 'nosuch'") and err.count("\n") == 1
    assert "(known: agent)" in err
    monkeypatch.setenv("BUTAI_LOCAL_JSON", str(tmp_path / "none.json"))
    code, _, err = cli("replies")
    assert code == 2 and "no stage given" in err


def read_line(stream, timeout):
    box = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else None


def test_watch_prints_replies_as_they_come_and_exits_0_on_ctrl_c(fresh_stage):
    proc = subprocess.Popen([sys.executable, "-m", "butai_tools.cli", "watch", "agent", "--interval", "0.1"],
                            cwd=ROOT, env=fresh_stage.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8")
    try:
        assert "watching" in read_line(proc.stderr, 30)
        fresh_stage.reply("一つ目")
        first = read_line(proc.stdout, 20)
        fresh_stage.reply("二つ目")
        second = read_line(proc.stdout, 20)
        assert first.rstrip("\n").endswith("  一つ目") and second.rstrip("\n").endswith("  二つ目")
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert proc.stdout.read() == ""  # nothing else was printed, nothing twice
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_watch_stops_on_ctrl_c_even_when_started_with_sigint_ignored(fresh_stage):
    """The cause of a watch that outlived its Ctrl-C: a background job of a non-interactive shell (`make test
    &` beside another run) starts with SIGINT ignored, Python then installs no KeyboardInterrupt, and the
    child inherits that.  `butai watch` now installs the handler itself."""
    proc = subprocess.Popen([sys.executable, "-m", "butai_tools.cli", "watch", "agent", "--interval", "0.1"],
                            cwd=ROOT, env=fresh_stage.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8", preexec_fn=_ignore_sigint)
    try:
        assert "watching" in read_line(proc.stderr, 30)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class SlowProxy:
    """A proxy in front of the local runtime that forwards a fetch and then holds back its answer (the
    replies are claimed on the stage, but the client has not got them): what Ctrl-C meets during a slow
    fetch.  Only fetches that claimed something are held; later ones pass."""

    def __init__(self, upstream: str):
        import urllib.request
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.held = threading.Event()
        self.release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = urllib.request.Request(upstream + self.path, data=body, method="POST",
                                                 headers={k: v for k, v in self.headers.items()
                                                          if k.lower() in ("authorization", "content-type")})
                with urllib.request.urlopen(request, timeout=30) as response:
                    status, answer = response.status, response.read()
                if self.path.endswith("/fetch_replies") and answer != b"[]" and not proxy.held.is_set():
                    proxy.held.set()
                    proxy.release.wait(60)     # the answer is late; the client gives up first
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.release.set()
        self.server.shutdown()


def test_ctrl_c_during_a_slow_fetch_exits_at_once_and_prints_what_it_claimed(fresh_stage):
    proxy = SlowProxy(fresh_stage.api_url)
    proc = subprocess.Popen([sys.executable, "-m", "butai_tools.cli", "watch", "agent", "--api-url", proxy.url,
                             "--interval", "0.1"], cwd=ROOT, env=fresh_stage.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8")
    try:
        assert "watching" in read_line(proc.stderr, 30)
        fresh_stage.reply("取られた返事")
        assert proxy.held.wait(30)          # the stage has claimed it; the answer is held back
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert time.monotonic() - started < 15   # not the fetch's timeout, nor its retries
        out = proc.stdout.read()
        assert out.rstrip("\n").endswith("  取られた返事") and out.count("\n") == 1   # printed, once
    finally:
        proxy.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # and it is gone from the stage: fetch-once held
    from butai.client import Stage
    assert Stage(fresh_stage.api_url, fresh_stage.stage_id, fresh_stage.agent_key).fetch_replies() == []
