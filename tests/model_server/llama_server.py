"""Start llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`) on 127.0.0.1, and stop it.

It serves the bundled GGUF (evigate.llm.models resolves and verifies it; nothing is downloaded) and speaks the same
wire protocol as vLLM and Ollama's OpenAI endpoint, so evigate reaches it as `openai/<alias>` with an api_base.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ALIAS = "qwen"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def llama_server(log_file: Path, *, n_ctx: int = 4096, threads: int = 1, ready_s: float = 300) -> Iterator[str]:
    """Yield the server's api_base once it answers /v1/models; the process is ended on exit, whatever happened."""
    from evigate.llm.models import resolve_local_model

    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(resolve_local_model()), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
        "--n_threads_batch", str(threads), "--verbose", "False",
    ]
    with log_file.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    api_base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + ready_s
        while not _answers(f"{api_base}/models"):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_file.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama_cpp.server did not come up (exit {process.poll()}):\n{tail}")
            time.sleep(0.5)
        yield api_base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200 and ALIAS in json.dumps(json.loads(response.read()))
    except (OSError, ValueError):
        return False
