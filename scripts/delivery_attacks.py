#!/usr/bin/env python3
"""Agents that go away while the player answers: does any reply get lost, or handed to two live agents?

Against a local stage only (it refuses anything but http://127.0.0.1), one fresh agent stage per kind of
attack, each attack repeated ``--kills`` times (20 by default):

- **curl long-poll**: `curl … fetch_replies -d '{"wait":20}'`, killed after 1 s; then the player replies
  (each on a stage of its own, so that no later curl takes the reply);
- **python client**: an agent looping on `Stage.wait_for_replies` (printing each reply it is handed),
  killed with SIGKILL at a random moment: while it waits, or just after the player's reply;
- **butai watch**: `butai watch --json`, killed with SIGKILL the same way;
- **dropped connection**: the player replies, then a plain fetch whose connection is closed as soon as the
  request is sent, its answer never read;
- **mcp server killed**: an MCP host (the `mcp` package's own stdio client, looping on `wait_for_replies`
  and printing each reply it is handed) whose `butai mcp` is killed with SIGKILL 0–600 ms after the
  player's reply; the host starts a new server and goes on, passing the ids it received last as `ack`
  (the new server knows nothing of what the old one wrote).  The host is never killed: a reply it gets
  twice is a duplicate to a live agent;
- **mcp host killed**: such a host (its server with it, which then sees its stdin end) killed with
  SIGKILL 0–600 ms after the player's reply, beside a witness host that is never killed.

On the python and watch stages a second agent of the same kind (the witness) runs all along and is never
killed; it polls every 2 s while the agents that are killed long-poll, so those usually get the reply first
and die holding it, and the witness gets what comes back when their leases end.  When the attacks are over,
the replies are drained by the witnesses and, on the other stages, by a fresh agent, for at most one lease
(30 s) and a margin.

A reply is *handed over* when an agent printed it (curl and the dropped connection print nothing).  It is
**lost** when no agent ever had it in hand; it is a **duplicate to live agents** when it was handed to an
agent while an agent that had it earlier was still alive.  A reply a killed agent had printed and that comes
back to another agent after the kill is a *redelivery* (the dead agent's acknowledgement never came): it is
counted, and it is no duplicate to a live agent.  A reply first handed to any agent with a delivery count
above 1 was *claimed for nobody*: a fetch whose caller was gone took it, and its lease brought it back.

    .venv/bin/python scripts/delivery_attacks.py --start                 # its own `butai run`, 20 of each
    .venv/bin/python scripts/delivery_attacks.py --start --kills 4 --json

Exit status 0 when nothing was lost and nothing was handed to two live agents, 1 otherwise, 2 for bad
arguments or a target that is not local.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from load_test import Refused, StartedStage, loopback_url, make_stage  # noqa: E402

from butai.protocol import LEASE_DEFAULT_S, MAX_WAIT_S  # noqa: E402

KINDS = ("curl long-poll", "python client", "butai watch", "dropped connection", "mcp server killed",
         "mcp host killed")
MCP_KINDS = ("mcp server killed", "mcp host killed")
DRAIN_MARGIN_S = 25.0
READY_S = 60.0

# The python agent: hands each reply over by printing it; its next wait_for_replies acknowledges them.
# argv[4] "poll": poll every 2 s instead of long-polling (the witness).
PYTHON_AGENT = """
import json, sys
from butai.client import Stage
stage = Stage(sys.argv[1], sys.argv[2], sys.argv[3])
long_poll = sys.argv[4] != "poll"
print("ready", flush=True)
while True:
    for reply in stage.wait_for_replies(timeout=None, long_poll=long_poll):
        print(json.dumps({"id": reply.id, "deliveries": reply.deliveries}), flush=True)
"""


# The MCP host: the SDK's stdio client running `butai mcp` (through a launcher that writes the server's pid
# to argv[5], so the attack can kill it).  It prints each reply it is handed; its next call passes their
# ids as `ack` (until a call succeeds), and when its server dies it starts another and goes on.
# argv[4] "poll": fetch_replies every 2 s instead of waiting (the witness).
MCP_HOST = """
import json, os, sys
import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
api, stage_id, key, mode, pidfile = sys.argv[1:6]
launch = ("import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); "
          "os.execv(sys.executable, [sys.executable, '-m', 'butai_tools.cli', 'mcp'])")
params = StdioServerParameters(command=sys.executable, args=["-c", launch, pidfile], cwd=os.getcwd(),
                               env={**os.environ, "BUTAI_API_URL": api, "BUTAI_STAGE_ID": stage_id,
                                    "BUTAI_AGENT_KEY": key})

async def serve_once(ack):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(60):
                await session.initialize()
            print("ready", flush=True)
            while True:
                if mode == "poll":
                    await anyio.sleep(2)
                    call = ("fetch_replies", {"ack": ack})
                else:
                    call = ("wait_for_replies", {"timeout": 20, "ack": ack})
                with anyio.fail_after(60):
                    result = await session.call_tool(*call)
                if result.is_error:
                    print("error " + json.dumps(result.content[0].text), file=sys.stderr, flush=True)
                    await anyio.sleep(0.5)
                    continue
                replies = result.structured_content["replies"]
                for reply in replies:
                    print(json.dumps({"id": reply["id"], "deliveries": reply["deliveries"]}), flush=True)
                ack[:] = [reply["id"] for reply in replies]

async def main():
    ack = []
    while True:
        try:
            await serve_once(ack)
        except Exception as exc:          # the server died: start another
            print("server gone " + type(exc).__name__, file=sys.stderr, flush=True)
            await anyio.sleep(0.1)

anyio.run(main)
"""


@dataclass
class Agent:
    """An agent process; every reply it prints is a hand-over, stamped when read (and not after its death)."""
    name: str
    proc: subprocess.Popen
    handed: list[tuple[str, int, float]] = field(default_factory=list)     # (reply id, deliveries, when)
    died: float = math.inf
    ready: threading.Event = field(default_factory=threading.Event)
    pidfile: Path | None = None            # an MCP host's: its current server's pid

    def __post_init__(self) -> None:
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        for line in self.proc.stdout:
            line = line.strip()
            if line == "ready":
                self.ready.set()
                continue
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if isinstance(reply, dict) and "id" in reply:
                self.handed.append((reply["id"], int(reply.get("deliveries", 1)), min(time.monotonic(), self.died)))

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            if "watching" in line:
                self.ready.set()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.died = time.monotonic()

    def server_pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text()) if self.pidfile is not None else None
        except (OSError, ValueError):
            return None

    def kill_server(self) -> None:
        """Kills an MCP host's server (SIGKILL); the host starts another."""
        pid = self.server_pid()
        if pid is None:
            raise RuntimeError(f"{self.name} has no server")
        self.ready.clear()
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        pid = self.server_pid()
        if pid is not None:               # an MCP host's server (left running when the host was killed)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.died = min(self.died, time.monotonic())


@dataclass
class Tally:
    kind: str
    killed: int = 0
    sent: list[str] = field(default_factory=list)
    agents: list[Agent] = field(default_factory=list)
    drained: list[tuple[str, int, float]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    finished: float = 0.0

    def handouts(self) -> dict[str, list[tuple[float, float, int]]]:
        """reply id -> [(when handed, when its agent died, deliveries)], in time order."""
        out: dict[str, list[tuple[float, float, int]]] = {}
        for agent in self.agents:
            for rid, deliveries, when in agent.handed:
                out.setdefault(rid, []).append((when, agent.died, deliveries))
        for rid, deliveries, when in self.drained:
            out.setdefault(rid, []).append((when, math.inf, deliveries))
        return {rid: sorted(h) for rid, h in out.items()}

    def report(self) -> dict:
        handouts = self.handouts()
        sent = set(self.sent)
        live_duplicates = sorted(rid for rid, h in handouts.items()
                                 if any(later[0] < earlier[1] for i, earlier in enumerate(h) for later in h[i + 1:]))
        by_killed = {rid for agent in self.agents if agent.died < math.inf and agent.proc.returncode == -9
                     for rid, _, _ in agent.handed}
        return {"kind": self.kind, "agents_killed": self.killed, "replies": len(sent),
                "handed_to_agents_later_killed": len(by_killed & sent),
                "redelivered": sum(1 for h in handouts.values() if len(h) > 1),
                "lost": len(sent - set(handouts)), "lost_ids": sorted(sent - set(handouts)),
                "live_duplicates": len(live_duplicates), "live_duplicate_ids": live_duplicates,
                "claimed_for_nobody": sum(1 for h in handouts.values() if h[0][2] > 1),
                "unexpected": len(set(handouts) - sent), "seconds": round(self.finished - self.started, 1)}


class Attack:
    def __init__(self, api: str, new_stage, rng: random.Random):
        self.api, self.new_stage, self.rng = api, new_stage, rng
        self.stage = new_stage()
        self.stages = [self.stage]
        self.sent_by_stage: dict[str, list[str]] = {}
        self.started: list[Agent] = []
        self.folder = Path(tempfile.mkdtemp(prefix="butai-attacks-"))

    # -- the player and plain HTTP ------------------------------------------
    def request(self, method: str, path: str, key: str, body: dict | None = None, timeout: float = 30) -> tuple:
        import http.client
        parts = urllib.parse.urlsplit(self.api)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else b""
            conn.request(method, path, body=data, headers={"Authorization": f"Bearer {key}",
                                                           "Content-Type": "application/json"})
            answer = conn.getresponse()
            raw = answer.read()
            return answer.status, json.loads(raw) if raw else None
        finally:
            conn.close()

    def reply(self, tally: Tally, text: str) -> None:
        for _ in range(5):
            status, body = self.request("POST", f"/stages/{self.stage['stage_id']}/reply", self.stage["player_key"],
                                        {"text": text})
            if status == 202:
                tally.sent.append(body["id"])
                self.sent_by_stage.setdefault(self.stage["stage_id"], []).append(body["id"])
                return
            time.sleep(1)
        raise RuntimeError(f"the player's reply was refused: {status} {body}")

    # -- agents ---------------------------------------------------------------
    def start_agent(self, kind: str, name: str, poll: bool = False) -> Agent:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        pidfile = None
        if kind in MCP_KINDS:
            pidfile = self.folder / f"server-{len(self.started)}.pid"
            args = [sys.executable, "-c", MCP_HOST, self.api, self.stage["stage_id"], self.stage["agent_key"],
                    "poll" if poll else "wait", str(pidfile)]
        elif kind == "python client":
            args = [sys.executable, "-c", PYTHON_AGENT, self.api, self.stage["stage_id"], self.stage["agent_key"],
                    "poll" if poll else "long-poll"]
        else:
            args = [sys.executable, "-m", "butai_tools.cli", "watch", self.stage["stage_id"], "--api-url", self.api,
                    "--key", self.stage["agent_key"], "--json", *(["--poll", "--interval", "2"] if poll else [])]
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                encoding="utf-8")
        agent = Agent(name, proc, pidfile=pidfile)
        self.started.append(agent)
        if not agent.ready.wait(READY_S):
            agent.stop()
            raise RuntimeError(f"{name} did not start")
        return agent

    def run(self, kind: str, kills: int) -> Tally:
        tally = Tally(kind)
        witness = None
        if kind in ("python client", "butai watch", "mcp host killed"):
            witness = self.start_agent(kind, f"{kind} witness", poll=True)
            tally.agents.append(witness)
        elif kind == "mcp server killed":
            # The one host, never killed: its servers are.  It drains too.
            witness = self.start_agent(kind, "mcp host")
            tally.agents.append(witness)
        attack = {"curl long-poll": self._curl, "python client": self._python, "butai watch": self._watch,
                  "dropped connection": self._dropped, "mcp host killed": self._mcp_host,
                  "mcp server killed": lambda tally, i: self._mcp_server(tally, i, witness)}[kind]
        try:
            for i in range(kills):
                attack(tally, i)
                tally.killed += 1
            self.drain(tally, witness)
        finally:
            for agent in self.started:
                agent.stop()
            tally.finished = time.monotonic()
        return tally

    def _mcp_host(self, tally: Tally, i: int) -> None:
        agent = self.start_agent("mcp host killed", f"mcp host {i}")
        tally.agents.append(agent)
        self.reply(tally, f"mcp host {i}")
        time.sleep(self.rng.uniform(0.0, 0.6))   # while it claims, writes, prints or makes its next call
        agent.kill()

    def _mcp_server(self, tally: Tally, i: int, host: Agent) -> None:
        self.reply(tally, f"mcp server {i}")
        time.sleep(self.rng.uniform(0.0, 0.6))   # while it claims, writes the result, or acknowledges it
        host.kill_server()
        if not host.ready.wait(READY_S):
            raise RuntimeError("the MCP host did not start a new server")

    def _curl(self, tally: Tally, i: int) -> None:
        if i:
            self.stage = self.new_stage()
            self.stages.append(self.stage)
        url = f"{self.api}/stages/{self.stage['stage_id']}/fetch_replies"
        proc = subprocess.Popen(["curl", "-s", "-X", "POST", url, "-H", f"Authorization: Bearer {self.stage['agent_key']}",
                                 "-H", "Content-Type: application/json", "-d", json.dumps({"wait": MAX_WAIT_S})],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)                       # as the finding: the long-poll is killed after 1 s …
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        self.reply(tally, f"curl {i}")         # … and then the player replies

    def _python(self, tally: Tally, i: int) -> None:
        self._kill_an_agent("python client", tally, i)

    def _watch(self, tally: Tally, i: int) -> None:
        self._kill_an_agent("butai watch", tally, i)

    def _kill_an_agent(self, kind: str, tally: Tally, i: int) -> None:
        agent = self.start_agent(kind, f"{kind} {i}")
        tally.agents.append(agent)
        moment = self.rng.random()
        if moment < 0.3:
            # Killed while it waits (its long-poll is in flight), before the player answers.
            time.sleep(self.rng.uniform(0.1, 1.0))
            agent.kill()
            self.reply(tally, f"{kind} {i}")
        else:
            # Killed around the moment the reply reaches it: as it claims, before or after it prints, before or
            # after its next request acknowledges it.
            self.reply(tally, f"{kind} {i}")
            time.sleep(self.rng.uniform(0.0, 0.1) if moment < 0.7 else self.rng.uniform(0.1, 0.6))
            agent.kill()

    def _dropped(self, tally: Tally, i: int) -> None:
        self.reply(tally, f"dropped {i}")
        parts = urllib.parse.urlsplit(self.api)
        request = (f"POST /stages/{self.stage['stage_id']}/fetch_replies HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                   f"Authorization: Bearer {self.stage['agent_key']}\r\nContent-Type: application/json\r\n"
                   "Content-Length: 2\r\nConnection: close\r\n\r\n{}").encode()
        with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
            conn.sendall(request)             # sent whole, then the connection is dropped: nothing read
        # Let the server answer into the closed connection before the next round.
        time.sleep(0.3)

    def drain(self, tally: Tally, witness: Agent | None) -> None:
        """Waits until every reply sent is in some agent's hands, and until what killed agents held and never
        acknowledged has come back to a live one (at most a lease after the last kill): the witness's
        hands, or a fresh agent's."""
        last_kill = max((a.died for a in tally.agents if a.died < math.inf), default=time.monotonic())
        deadline = max(time.monotonic(), last_kill) + LEASE_DEFAULT_S + DRAIN_MARGIN_S
        redelivery_due = last_kill + LEASE_DEFAULT_S + 5

        def done() -> bool:
            handouts = tally.handouts()
            if not set(tally.sent) <= set(handouts):
                return False
            # held by a killed agent, not (yet) by a live one: it comes back unless it was acknowledged
            back = [rid for rid, h in handouts.items() if all(died < math.inf for _, died, _ in h)]
            return not back or time.monotonic() > redelivery_due

        if witness is not None:
            while time.monotonic() < deadline and not done():
                time.sleep(0.2)
            return
        from butai.client import Stage
        for one in self.stages:
            stage = Stage(self.api, one["stage_id"], one["agent_key"])
            mine = set(self.sent_by_stage.get(one["stage_id"], []))
            while time.monotonic() < deadline and not mine <= {rid for rid, _, _ in tally.drained}:
                got = stage.wait_for_replies(timeout=min(MAX_WAIT_S, max(1.0, deadline - time.monotonic())))
                tally.drained += [(reply.id, reply.deliveries, time.monotonic()) for reply in got]
            stage.close()


def run(args) -> dict:
    started = None
    if args.start:
        started = StartedStage()
        info = started.start()
    else:
        info = json.loads(Path(args.local_json).read_text(encoding="utf-8"))
    try:
        api = loopback_url(info["api_url"], "api_url")
        rng = random.Random(args.seed)
        reports = []
        for kind in args.kinds:
            def new_stage(name=f"attack-{kind.split()[0]}") -> dict:
                return make_stage(info, name)
            reports.append(Attack(api, new_stage, rng).run(kind, args.kills).report())
        return {"kills_per_kind": args.kills, "seed": args.seed, "lease_s": LEASE_DEFAULT_S, "attacks": reports,
                "started": None if started is None else {"pid": started.proc.pid, "exit_status": started.stop()}}
    finally:
        if started is not None and started.proc.poll() is None:
            started.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", action="store_true", help="start a local stage of its own (butai run)")
    parser.add_argument("--local-json", default=str(ROOT / ".butai" / "local.json"),
                        help="the running local stage's local.json (without --start)")
    parser.add_argument("--kills", type=int, default=20, help="attacks of each kind (default 20)")
    parser.add_argument("--kind", dest="kinds", action="append", choices=KINDS,
                        help="only this kind (repeatable; default: all four)")
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.kinds = args.kinds or list(KINDS)
    if args.kills < 1:
        parser.error("--kills must be at least 1")
    try:
        report = run(args)
    except Refused as exc:
        print(f"delivery_attacks: {exc}", file=sys.stderr)
        return 2
    failed = any(a["lost"] or a["live_duplicates"] or a["unexpected"] for a in report["attacks"])
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(f"{'attack':<20} {'killed':>6} {'replies':>7} {'held by the killed':>18} {'redelivered':>11} "
              f"{'claimed for nobody':>18} {'lost':>5} {'dup. to live':>12} {'s':>6}")
        for a in report["attacks"]:
            print(f"{a['kind']:<20} {a['agents_killed']:>6} {a['replies']:>7} {a['handed_to_agents_later_killed']:>18} "
                  f"{a['redelivered']:>11} {a['claimed_for_nobody']:>18} {a['lost']:>5} {a['live_duplicates']:>12} "
                  f"{a['seconds']:>6}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
