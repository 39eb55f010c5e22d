"""`butai bench model`: a real model on each path — load time, resident memory and latency per call.

``--gguf FILE`` starts llama.cpp's OpenAI-compatible server on the file (the docs/models.md recipe, on an
ephemeral port), ``--transformers PATH`` loads a model directory or ``.gguf`` file in this process.  Then
the classifier's own calls (``backend.interpret`` on cases of the evaluation set, every state it covers)
are timed, and for the server free conversation's plain chat too.

- load: spawn to the server's ready line; in process, `LocalModel.load` (torch and transformers imported
  before the clock starts);
- memory: the server process's resident set (VmRSS) after the calls; in process, this process's resident
  set after the calls less what it held before loading;
- floor, measured in the same run: ``GET /models`` on the server (the HTTP round trip), a one-token forward
  pass in process; each median is also given as a ratio to it.
"""
from __future__ import annotations

import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def register_bench(sub) -> None:
    p = sub.add_parser("model", help="a real model on the server or in process: load, memory, ms per call")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--gguf", type=Path, help="a GGUF file, served by llama.cpp's server (llama-cpp-python)")
    where.add_argument("--transformers", type=Path, help="a model directory or .gguf file, loaded in process")
    p.add_argument("--chat-format", default=None, help="llama.cpp chat format for a GGUF without a template "
                                                       "(gemma for Gemma)")
    p.add_argument("--threads", type=int, default=2, help="CPU threads for the model (default 2)")
    p.add_argument("--cases", type=int, default=12, help="classifier calls timed (default 12)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)


def _rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cases(count: int) -> list[Any]:
    from butai_tools.bench.classify import bench_cases
    from butai_tools.interpret.evaluation import load_dataset
    from chalicelib.scenario import GameRules, load_scenario
    rules = GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))
    return bench_cases(rules, load_dataset(ROOT / "scenarios" / "eval" / "interpret.json"))[:count]


def _summary(values: list[float], floor: float) -> dict[str, float | None]:
    median = statistics.median(values)
    return {"p50_ms": round(median, 1), "max_ms": round(max(values), 1),
            "ratio_to_floor": round(median / floor, 1) if floor > 0 else None}


def _time(call, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def _classify(backend: Any, cases: list[Any]) -> tuple[list[float], int]:
    times, errors = [], 0
    backend.interpret(cases[0].text, cases[0].choices, cases[0].context)      # warm-up, unmeasured
    for case in cases:
        start = time.perf_counter()
        result = backend.interpret(case.text, case.choices, case.context)
        times.append((time.perf_counter() - start) * 1000)
        errors += result.error is not None
    return times, errors


def bench_server(gguf: Path, *, threads: int, cases: int, chat_format: str | None) -> dict[str, Any]:
    from chalicelib.interpret.backends import build_backend
    from chalicelib.llm.chat import Chat
    from chalicelib.llm.transport import OpenAITransport
    with tempfile.TemporaryDirectory(prefix="butai-bench-model-") as tmp:
        log = Path(tmp) / "server.log"
        extra = ["--chat_format", chat_format] if chat_format else []
        started = time.monotonic()
        with log.open("w") as handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", "bench",
                 "--n_ctx", "8192", "--n_threads", str(threads), "--host", "127.0.0.1", "--port", "0", *extra],
                stdout=handle, stderr=subprocess.STDOUT)
            try:
                url = None
                while url is None and time.monotonic() - started < 300 and process.poll() is None:
                    found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
                    url = found.group(1) + "/v1" if found else None
                    time.sleep(0.05)
                if url is None:
                    raise RuntimeError("the server did not start:\n" + log.read_text(errors="replace")[-2000:])
                load_s = time.monotonic() - started
                transport = OpenAITransport(url, timeout=300)
                floor = statistics.median(_time(lambda: transport.models(refresh=True), 20))
                backend = build_backend("openai", base_url=url, model="bench", timeout=300)
                times, errors = _classify(backend, _cases(cases))
                chat = Chat(OpenAITransport(url, timeout=300), model="bench")
                messages = [{"role": "user", "content": "「こんばんは」と一言だけ返してください。"}]
                chats = _time(lambda: chat.complete(messages, max_tokens=32, temperature=0.7), 4)
                rss = _rss_mb(process.pid)
            finally:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
    return {"path": "llama.cpp server", "model": gguf.name, "threads": threads, "load_s": round(load_s, 1),
            "rss_mb": round(rss), "floor": "GET /models", "floor_ms": round(floor, 2),
            "classifier": {"calls": len(times), "errors": errors, "mode": backend.current_mode,
                           **_summary(times, floor)},
            "chat_32_tokens": {"calls": len(chats), **_summary(chats, floor)}}


def bench_in_process(path: Path, *, threads: int, cases: int) -> dict[str, Any]:
    import torch
    import transformers  # noqa: F401  (imported before the clock, as a running process has it)

    from chalicelib.interpret.backends.transformers_local import TransformersBackend
    torch.set_num_threads(threads)
    before = _rss_mb()
    backend = TransformersBackend(str(path), device="cpu", timeout=300)
    start = time.perf_counter()
    backend.load()
    load_s = time.perf_counter() - start
    local = backend.chooser
    bos = torch.tensor([[local.tokenizer.bos_token_id]])

    def forward() -> None:
        with torch.inference_mode():
            local.model(input_ids=bos)

    floor = statistics.median(_time(forward, 20))
    times, errors = _classify(backend, _cases(cases))
    return {"path": "transformers in process", "model": path.name, "threads": threads, "load_s": round(load_s, 1),
            "rss_mb": round(_rss_mb() - before), "floor": "one-token forward pass", "floor_ms": round(floor, 2),
            "template": local.has_chat_template,
            "classifier": {"calls": len(times), "errors": errors, **_summary(times, floor)}}


def _run(args) -> int:
    if args.gguf:
        figures = bench_server(args.gguf, threads=args.threads, cases=args.cases, chat_format=args.chat_format)
    else:
        figures = bench_in_process(args.transformers, threads=args.threads, cases=args.cases)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=1))
    else:
        for key, value in figures.items():
            print(f"{key}: {value}")
    return 0
