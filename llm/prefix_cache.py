"""Reusing evaluated prompt prefixes across agent calls, rounds and processes.

Prompt evaluation is most of a small local model's time: ~80 prompt tokens/s on one core, and every call starts
with the agent's system prompt (DSPy's field list, JSON schema and instructions: 450-1,500 tokens per agent, the
same on every call). llama.cpp keeps one context, so when agents take turns the previous agent's prompt is gone.

`PrefixCache` keeps KV states of one sequence (not llama-cpp-python's whole `LlamaState`, which also copies a
512 x vocabulary logits buffer — 311 MB for Qwen — on every save):

- in RAM, the state after each completed call, keyed by its tokens (LRU within a byte budget): the next call of
  the same agent restores it and evaluates only what differs (round 2 shares the system prompt, the question and
  the first round's evidence);
- on disk, the state of each agent's fixed opening — system prompt and demos, up to the text `pin` names — so a
  new `evigate ask` process starts warm. Files are keyed by the model file, llama.cpp version and context size;
  a file that does not load is deleted and the prompt is evaluated normally.

`prefix_reuse.install(llama, cache)` wraps the instance's `create_completion`, which every chat handler of
llama-cpp-python calls with the prompt's tokens; `Llama.generate` then reuses the restored prefix by itself. The
fast greedy path (`greedy.complete_greedy`) primes and remembers through the same functions.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evigate.llm.state_files import (
    SUFFIX,
    encode_state,
    make_private_directory,
    read_state,
    read_tokens,
    state_name,
    unsafe_directory,
)

logger = logging.getLogger(__name__)

MIN_PREFIX_TOKENS = 32
"""Shorter shared prefixes are not worth a restore (the chat template's opening alone is a few tokens)."""


def common_prefix(a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> int:
    """Length of the longest common prefix of two token sequences."""
    left, right = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    n = min(len(left), len(right))
    if n == 0:
        return 0
    differs = np.flatnonzero(left[:n] != right[:n])
    return int(differs[0]) if len(differs) else n


@dataclass
class Match:
    """A stored state whose tokens share `length` leading tokens with a prompt."""

    tokens: np.ndarray
    length: int
    data: bytes | None = None
    path: Path | None = None

    model_id: str = ""

    def load(self) -> bytes | None:
        if self.data is not None:
            return self.data
        assert self.path is not None
        return read_state(self.path, self.model_id, self.tokens)


class PrefixCache:
    """KV states of evaluated prompts, found again by longest common token prefix (see the module docstring).

    Args:
        capacity_bytes: RAM for states of recent calls (0 keeps none in RAM).
        disk_dir: where system-prompt states persist across processes (None: RAM only).
        max_disk_files: older files beyond this many are removed.
        model_id: the identity of the model the states belong to (default: the directory's name, which
            `models.prefix_state_dir` derives from the model file, llama.cpp's version and n_ctx).
    """

    def __init__(
        self, capacity_bytes: int, disk_dir: Path | None = None, max_disk_files: int = 24, model_id: str | None = None
    ) -> None:
        self.capacity_bytes = capacity_bytes
        self.model_id = model_id if model_id is not None else (disk_dir.name if disk_dir is not None else "")
        self.refused: str | None = unsafe_directory(disk_dir) if disk_dir is not None else None
        if self.refused is not None:
            logger.warning("prompt states are not read from or written to %s: %s", disk_dir, self.refused)
            disk_dir = None
        self.disk_dir = disk_dir
        self.max_disk_files = max_disk_files
        self._ram: OrderedDict[bytes, tuple[np.ndarray, bytes]] = OrderedDict()
        self._disk_index: dict[Path, np.ndarray] | None = None
        self._lock = threading.Lock()
        self.pin: str | None = None
        self.stats = {"restored_tokens": 0, "disk_writes": 0, "disk_hits": 0, "ram_hits": 0}

    # -- lookup ---------------------------------------------------------------------------------------------------
    def best(self, tokens: Sequence[int]) -> Match | None:
        """The stored state sharing the longest prefix with `tokens` (at least MIN_PREFIX_TOKENS), if any."""
        found: Match | None = None
        with self._lock:
            for stored, data in self._ram.values():
                length = common_prefix(stored, tokens)
                if length >= MIN_PREFIX_TOKENS and (found is None or length > found.length):
                    found = Match(stored, length, data=data)
            for path, stored in self._disk().items():
                length = common_prefix(stored, tokens)
                if length >= MIN_PREFIX_TOKENS and (found is None or length > found.length):
                    found = Match(stored, length, path=path, model_id=self.model_id)
        return found

    def on_disk(self, tokens: Sequence[int]) -> bool:
        return self.disk_dir is not None and self._path_for(tokens) in self._disk()

    # -- storing --------------------------------------------------------------------------------------------------
    def remember(self, tokens: Sequence[int], data: bytes) -> None:
        """Keep a state in RAM (LRU within capacity)."""
        if self.capacity_bytes <= 0 or len(data) > self.capacity_bytes:
            return
        stored = np.asarray(tokens, dtype=np.int32).copy()
        key = hashlib.sha1(stored.tobytes()).digest()
        with self._lock:
            self._ram.pop(key, None)
            self._ram[key] = (stored, data)
            while sum(len(d) for _, d in self._ram.values()) > self.capacity_bytes:
                self._ram.popitem(last=False)

    def persist(self, tokens: Sequence[int], data: bytes) -> None:
        """Write a state to disk atomically; failures only cost the next process its warm start."""
        if self.disk_dir is None:
            return
        stored = np.asarray(tokens, dtype=np.int32)
        path = self._path_for(stored)
        try:
            make_private_directory(self.disk_dir)
            handle, tmp = tempfile.mkstemp(dir=self.disk_dir, suffix=".tmp")  # created 0600
            with os.fdopen(handle, "wb") as out:
                out.write(encode_state(self.model_id, stored, data))
            os.replace(tmp, path)
        except OSError as exc:
            logger.warning("could not persist a prompt state to %s: %s", self.disk_dir, exc)
            return
        with self._lock:
            self._disk()[path] = stored.copy()
            self.stats["disk_writes"] += 1
            self._trim_disk()

    def forget(self, match: Match) -> None:
        """Drop a state that did not load (stale or damaged file)."""
        with self._lock:
            if match.path is not None:
                match.path.unlink(missing_ok=True)
                self._disk().pop(match.path, None)
            else:
                key = hashlib.sha1(np.asarray(match.tokens, dtype=np.int32).tobytes()).digest()
                self._ram.pop(key, None)

    # -- disk -----------------------------------------------------------------------------------------------------
    def _path_for(self, tokens: Sequence[int]) -> Path:
        assert self.disk_dir is not None
        return self.disk_dir / state_name(self.model_id, tokens)

    def _disk(self) -> dict[Path, np.ndarray]:
        if self._disk_index is None:
            self._disk_index = {}
            if self.disk_dir is not None and self.disk_dir.is_dir():
                for path in self.disk_dir.glob(f"*{SUFFIX}"):
                    tokens = read_tokens(path, self.model_id)
                    if tokens is not None:
                        self._disk_index[path] = tokens
        return self._disk_index

    def _trim_disk(self) -> None:
        index = self._disk()
        if len(index) <= self.max_disk_files:
            return
        by_age = sorted(index, key=lambda p: p.stat().st_mtime if p.exists() else 0.0)
        for path in by_age[: len(index) - self.max_disk_files]:
            path.unlink(missing_ok=True)
            index.pop(path, None)
