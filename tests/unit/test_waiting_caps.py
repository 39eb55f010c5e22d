"""Locally each waiting fetch holds a thread: waits are admitted up to a number per stage and in all, and a
fetch past either answers at once instead of waiting (docs/scaling.md)."""
import threading
import time

from chalicelib.stage.models import ReplyRequest
from chalicelib.stage.service import StageService
from chalicelib.stage.waiting import ReplySignal
from tests.memory_store import MemoryStageStore


def test_fetches_past_the_caps_answer_at_once_and_the_waiting_ones_still_get_the_reply(catalog):
    signal = ReplySignal(max_per_stage=2, max_total=3)
    service = StageService(MemoryStageStore(), catalog, waiter=signal)
    a, b, c = (service.create_stage(name) for name in ("a", "b", "c"))
    got: dict[str, list] = {}
    waiting = []

    def wait(name, stage):
        got[name] = service.fetch_replies(stage.stage_id, stage.agent_key, wait=20)

    for name, stage in (("a1", a), ("a2", a), ("b1", b)):
        thread = threading.Thread(target=wait, args=(name, stage))
        thread.start()
        waiting.append(thread)
    deadline = time.monotonic() + 30
    while sum(signal._waiting.values()) < 3 and time.monotonic() < deadline:     # the three are admitted
        time.sleep(0.01)
    assert sum(signal._waiting.values()) == 3
    # Stage a has its two; all three slots are taken: both answer at once (nothing is there yet).
    assert service.fetch_replies(a.stage_id, a.agent_key, wait=20) == []
    assert service.fetch_replies(c.stage_id, c.agent_key, wait=20) == []
    service.reply(a.stage_id, a.player_key, ReplyRequest(text="あ"))
    service.reply(b.stage_id, b.player_key, ReplyRequest(text="び"))
    waiting[2].join(timeout=10)                         # b's waiter is answered
    done = [t for t in waiting[:2] if (t.join(timeout=0.01) or not t.is_alive())]
    while not done:                                     # and one of a's
        done = [t for t in waiting[:2] if (t.join(timeout=0.05) or not t.is_alive())]
    signal.close()         # releases the one of stage a that got nothing
    for thread in waiting:
        thread.join(timeout=10)
    assert sorted(r.text for r in got["a1"] + got["a2"]) == ["あ"] and [r.text for r in got["b1"]] == ["び"]
    assert signal._waiting == {}            # every slot given back
