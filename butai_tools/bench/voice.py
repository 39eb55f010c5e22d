"""`butai bench voice`: how soon an agent's line is heard — the time to its first audio on the page — and the
speech model's real-time factor, against the same run's floors.

One local runtime in this process with its voice worker (the real speech model; moto on 127.0.0.1, the API
and /push on an ephemeral port, a fresh state folder so nothing is rendered before) and one page's socket
(the `websockets` client, subscribed as the page subscribes).  Each line is spoken over HTTP; the figures,
from the moment the speak request was sent:

- `speak`: the answer (the line is written at once; its voice is rendered after),
- `line_on_page`: the push with the line (the floor: what every line costs, voice or not),
- `audio_on_page`: the push with the line's audio (time to first audio),
- `synthesis`: the model alone saying the same words in the same voice, nothing else (the model's floor),

and `rtf` = synthesis seconds / seconds of audio.  A line said again (`again`) is neither synthesised nor
encoded: its audio comes from what was stored.  Synthesis is slow on 2 cores: keep `--lines` small.
"""
from __future__ import annotations

import json
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from butai_tools.bench.stage import _percentile as percentile

TEXTS = ("こんばんは、いらっしゃい。", "今夜は少し冷えますね。", "また来てくださいね。", "お茶でもいかがですか。",
         "それは良かったです。")


def register_bench(sub) -> None:
    p = sub.add_parser("voice", help="agent line → its audio on the page: time to first audio, real-time factor")
    p.add_argument("--lines", type=int, default=3, help=f"lines spoken (default 3, at most {len(TEXTS)})")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


def _summary(values: list[float]) -> dict:
    return {"p50_s": round(statistics.median(values), 3), "p90_s": round(percentile(values, 0.9), 3),
            "max_s": round(max(values), 3), "min_s": round(min(values), 3)}


def _speak(api: str, stage, text: str) -> tuple[float, float, dict]:
    request = urllib.request.Request(f"{api}/stages/{stage.stage_id}/speak", method="POST",
                                     data=json.dumps({"text": text}).encode(),
                                     headers={"Authorization": f"Bearer {stage.agent_key}",
                                              "Content-Type": "application/json"})
    sent = time.time()
    with urllib.request.urlopen(request, timeout=60) as response:
        body = json.loads(response.read())
    return sent, time.time(), body


class PageSocket:
    """One page's push socket: when each line, and each line's audio, arrived (wall clock)."""

    def __init__(self, url: str, stage_id: str, key: str):
        from websockets.sync.client import connect
        self.lines: dict[str, float] = {}
        self.audio: dict[str, tuple[float, str, bool]] = {}
        self._cond = threading.Condition()
        self._socket = connect(url, max_size=2 ** 20)
        self._socket.send(json.dumps({"action": "subscribe", "stage": stage_id, "key": key}))
        assert json.loads(self._socket.recv(timeout=10))["type"] == "subscribed"
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for raw in self._socket:
                now, message = time.time(), json.loads(raw)
                with self._cond:
                    if message.get("type") == "view":
                        for entry in message["view"]["log"]:
                            self.lines.setdefault(entry["id"], now)
                            if entry.get("audio"):
                                self.audio.setdefault(entry["id"], (now, entry["audio"], False))
                    elif message.get("type") == "audio":
                        for line in message["lines"]:
                            self.audio.setdefault(line["id"], (now, line.get("audio", ""),
                                                               line.get("status") == "failed"))
                    self._cond.notify_all()
        except Exception:  # noqa: BLE001 - closed at the end of the run
            return

    def wait_audio(self, entry: str, timeout: float) -> tuple[float, str, bool]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while entry not in self.audio:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no audio for {entry} within {timeout} s")
                self._cond.wait(left)
            return self.audio[entry]

    def close(self) -> None:
        self._socket.close()


def run(lines: int = 3) -> dict:
    from butai_tools.local.runtime import LocalRuntime
    from butai_tools.voice.engine import SAMPLE_RATE, engine
    from chalicelib.config import Settings

    texts = TEXTS[:max(1, min(lines, len(TEXTS)))]
    with tempfile.TemporaryDirectory() as tmp:
        runtime = LocalRuntime(state_dir=Path(tmp), port=0, demo_stage=None, scenario_stages={},
                               base_settings=Settings.from_env().with_(voice=True), rate=0)
        runtime.start()
        page = None
        try:
            loaded = engine().load()
            stage = runtime.stage_service.create_stage("bench-voice")
            page = PageSocket(runtime.api_url.replace("http://", "ws://") + "/push", stage.stage_id,
                              stage.player_key)
            rows = []
            for text in [*texts, texts[0]]:
                sent, answered, body = _speak(runtime.api_url, stage, text)
                heard, audio, failed = page.wait_audio(body["id"], timeout=120)
                outcome = runtime.voice_worker.wait_for(body["id"], timeout=5)
                rows.append({"text": text, "speak_s": answered - sent, "line_s": page.lines[body["id"]] - sent,
                             "audio_s": heard - sent, "failed": failed,
                             "seconds": outcome.rendered.seconds if outcome and outcome.rendered else None,
                             "synthesized": outcome.rendered.synthesized if outcome and outcome.rendered else 0})
            first, again = rows[:-1], rows[-1]
            # The model's floor: the same words, voice and speed, said by the model alone (nothing stored).
            spec = runtime.stage_service.voice_spec(stage.character)
            synthesis, audio_seconds = [], []
            for text in texts:
                started = time.perf_counter()
                pcm = engine().sentence(text, spec)
                synthesis.append(time.perf_counter() - started)
                audio_seconds.append(len(pcm) / SAMPLE_RATE)
        finally:
            if page is not None:
                page.close()
            runtime.stop()
    rtf = [s / a for s, a in zip(synthesis, audio_seconds)]
    ttfa = [r["audio_s"] for r in first]
    return {
        "lines": len(first), "voice": spec.to_dict(), "model_load_s": round(loaded.seconds, 2),
        "speak": _summary([r["speak_s"] for r in first]),
        "line_on_page": _summary([r["line_s"] for r in first]),
        "audio_on_page": _summary(ttfa),
        "synthesis": _summary(synthesis),
        "audio_seconds": _summary(audio_seconds),
        "rtf": {"p50": round(statistics.median(rtf), 2), "max": round(max(rtf), 2)},
        "audio_after_line_p50_s": round(statistics.median([r["audio_s"] - r["line_s"] for r in first]), 3),
        "overhead_over_synthesis_p50_s": round(statistics.median(ttfa) - statistics.median(synthesis), 3),
        "again": {"audio_on_page_s": round(again["audio_s"], 3), "synthesized": again["synthesized"]},
        "failed": sum(r["failed"] for r in rows),
    }


def _run(args) -> int:
    result = run(args.lines)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    print(f"butai bench voice: {result['lines']} agent lines in {result['voice']['voice']} "
          f"(model loaded in {result['model_load_s']} s)")
    for name in ("speak", "line_on_page", "audio_on_page", "synthesis", "audio_seconds"):
        s = result[name]
        print(f"  {name:15} p50 {s['p50_s']:7.3f} s   p90 {s['p90_s']:7.3f} s   max {s['max_s']:7.3f} s")
    print(f"  real-time factor p50 {result['rtf']['p50']} (max {result['rtf']['max']}); audio follows the line "
          f"by {result['audio_after_line_p50_s']} s; the pipeline adds {result['overhead_over_synthesis_p50_s']} s "
          f"to the model's own time")
    print(f"  a line said again: audio on the page after {result['again']['audio_on_page_s']} s, "
          f"{result['again']['synthesized']} sentences synthesised")
    return 0
