"""llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``, the docs/models.md recipe) in its
own process on an ephemeral port; the port is read from uvicorn's start line."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path


class LlamaServer:
    def __init__(self, model: Path, log: Path, *, alias: str, n_ctx: int = 32768, threads: int = 1,
                 extra: tuple[str, ...] = ()) -> None:
        self.log = log
        self.alias = alias
        self.handle = log.open("w")
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
             "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--host", "127.0.0.1", "--port", "0", *extra],
            stdout=self.handle, stderr=subprocess.STDOUT)
        self.url = self._wait_for_url()
        self.load_s = time.monotonic() - self.started

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            found = re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", self.text())
            if found:
                return found.group(1) + "/v1"
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("llama.cpp server did not start:\n" + self.text()[-3000:])

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def requests(self, path: str = "/v1/chat/completions") -> int:
        """How many requests to `path` the server has answered (uvicorn's access log)."""
        return len(re.findall(r'"POST %s HTTP/1\.1" 200' % re.escape(path), self.text()))

    def rss_mb(self) -> float:
        """The server process's resident memory now, in MB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.handle.close()
