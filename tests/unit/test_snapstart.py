"""SnapStart's hooks (chalicelib/snapstart.py), through the runtime's own library (snapshot_restore_py).

A snapshot is simulated by a fork: a new interpreter imports the handler module as Lambda does, runs the
before-snapshot hooks in the runtime's order, draws an id, and forks twice — two instances resumed from
one memory image (fork's own reseeding of ``random`` undone: a restore runs no fork handlers).  Each runs the after-restore hooks (or, for the control, does not) with credentials of
its own and reports what it draws and uses.  Without the hooks the two instances share their random
draws, their next id and the clients made before the snapshot; with them they do not.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chalicelib import snapstart
from tests.conftest import ROOT

LIFECYCLE = r"""
import gc, json, os, random, sys
import app                                   # the handler module: registers the hooks, pauses the collector
import snapshot_restore_py as runtime
from chalicelib import context, ids
from chalicelib.interpret.ja import sudachi

made = context.get()                          # a start-up that built the services and their clients
for func, args, kwargs in reversed(runtime.get_before_snapshot()):    # the runtime's order: reversed
    func(*args, **kwargs)
snapshot = {"analyser": sudachi._TOKENIZER is not None, "director": "chalicelib.director" in sys.modules,
            "frozen": gc.get_freeze_count(), "collector": gc.isenabled()}
MS = 1_700_000_000_000
ids.new_id(now_ms=MS)                        # an id made before the snapshot
image = random.getstate()                    # the generator as the snapshot holds it
instances = []
for n in range(2):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                              # an instance resumed from the snapshot
        os.close(read)
        # fork reseeds `random` in the child (os.register_at_fork); a restore runs no fork handlers.
        random.setstate(image)
        os.environ["AWS_ACCESS_KEY_ID"] = f"instance-{n}"
        if sys.argv[1] == "hooks":
            for func, args, kwargs in runtime.get_after_restore():
                func(*args, **kwargs)
        collector = gc.isenabled()
        services = context.get()
        client = services.stage.store._db
        out = {"random": random.random(), "id": ids.new_id(now_ms=MS), "collector": collector,
               "same_services": services is made, "same_client": client is made.stage.store._db,
               "key": client._request_signer._credentials.access_key}
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    instances.append((pid, read))
results = []
for pid, read in instances:
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.waitpid(pid, 0)
    results.append(json.loads(data))
print(json.dumps({"snapshot": snapshot, "instances": results}))
"""


def _lifecycle(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUTAI_", "AWS_"))}
    # The cloud's settings (no endpoint override): clients resolve this environment's credentials.
    env.update(AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="start-up", AWS_SECRET_ACCESS_KEY="x")
    out = subprocess.run([sys.executable, "-c", LIFECYCLE, mode], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def with_hooks():
    return _lifecycle("hooks")


def test_before_the_snapshot_a_first_turns_own_start_up_is_done_once(with_hooks):
    snapshot = with_hooks["snapshot"]
    assert snapshot["analyser"] and snapshot["director"]
    assert snapshot["frozen"] > 0                   # start-up's objects moved out of the collector's way
    assert snapshot["collector"] is False           # and the collector still paused


def test_instances_restored_from_one_snapshot_share_nothing_drawn_or_connected(with_hooks):
    first, second = with_hooks["instances"]
    assert first["random"] != second["random"]
    assert first["id"] != second["id"]
    for n, instance in enumerate((first, second)):
        assert not instance["same_services"] and not instance["same_client"]
        assert instance["key"] == f"instance-{n}"   # credentials of the restored instance, not start-up's
        assert instance["collector"] is False       # paused again until the instance's first request


def test_without_the_hooks_they_would_share_them():
    # The control: the same simulation with no after-restore hook shows what the hooks prevent.
    first, second = _lifecycle("none")["instances"]
    assert first["random"] == second["random"]
    assert first["id"] == second["id"]
    assert first["same_client"] and second["same_client"] and first["key"] == second["key"] == "start-up"


def test_the_hooks_are_registered_with_the_runtime_only_where_it_provides_them(monkeypatch):
    import snapshot_restore_py
    monkeypatch.setattr(snapshot_restore_py, "_before_snapshot_registry", [])
    monkeypatch.setattr(snapshot_restore_py, "_after_restore_registry", [])
    assert snapstart.install() is True
    assert snapshot_restore_py.get_before_snapshot() == [(snapstart.prepare, (), {})]
    assert snapshot_restore_py.get_after_restore() == [(snapstart.restored, (), {})]
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)     # outside Lambda: not importable
    assert snapstart.install() is False
