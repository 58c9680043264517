"""Start llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`) on 127.0.0.1, and stop it.

It serves the bundled GGUF (evigate.llm.models resolves and verifies it; nothing is downloaded) and speaks the same
wire protocol as vLLM and Ollama's OpenAI endpoint, so evigate reaches it as `openai/<alias>` with an api_base.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.servers import free_port, running, wait_http

ALIAS = "qwen"
# `python -m llama_cpp.server`, with the model loaded as evigate loads it: llama.cpp's extra weight buffers (AMX
# repacking) only where EVIGATE_LLAMA_EXTRA_BUFFERS asks for them. On a CPU that reports AMX inside a sandbox that
# grants no tile state, the plain server loads, answers /v1/models, and dies with SIGSEGV at its first decode.
SERVER_ENTRY = (
    "import runpy, sys\n"
    "from evigate.llm.runtime import _model_params_override, extra_buffers_enabled\n"
    "sys.argv = ['llama_cpp.server', *sys.argv[1:]]\n"
    "with _model_params_override(use_extra_buffers=extra_buffers_enabled()):\n"
    "    runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n"
)


@contextmanager
def llama_server(log_file: Path, *, n_ctx: int = 4096, threads: int = 1, ready_s: float = 300) -> Iterator[str]:
    """Yield the server's api_base once /v1/models lists the alias; the process is ended on exit, whatever happened."""
    from evigate.llm.models import resolve_local_model

    port = free_port()
    command = [
        sys.executable, "-c", SERVER_ENTRY, "--model", str(resolve_local_model()), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
        "--n_threads_batch", str(threads), "--verbose", "False",
    ]
    api_base = f"http://127.0.0.1:{port}/v1"
    with running(command, log_file) as process:
        wait_http(f"{api_base}/models", process, log_file, seconds=ready_s, ready=_lists_alias, name="llama_cpp.server")
        yield api_base


def _lists_alias(body: bytes) -> bool:
    return ALIAS in json.dumps(json.loads(body))
