"""The on-disk format of persisted prompt states, and the checks that make a planted file useless.

A KV state is what the model "has read": restoring one makes the model continue as if it had evaluated the tokens
stored beside it, while the audit shows the prompt that was actually sent. So a state file is trusted only when

- its directory (and the directory holding it) is owned by this user and writable by nobody else, so no other
  account can plant or swap files (refused otherwise: the cache then runs in RAM only);
- the file is owned by this user and not group- or world-writable;
- its name and header carry the digest of the model identity plus its tokens, recomputed on load: a file renamed,
  copied from another model, or with edited tokens does not match;
- the digest of its state bytes matches, so a damaged or altered body is not restored.

Layout: MAGIC | key digest (32) | body digest (32) | token count (8, little endian) | int32 tokens | state bytes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MAGIC = b"EVGKV002"
_DIGEST = 32
_HEADER = len(MAGIC) + 2 * _DIGEST + 8
SUFFIX = ".kv"


def state_key(model_id: str, tokens: Sequence[int] | np.ndarray) -> bytes:
    """The digest a state is filed and verified under: the model identity plus the prompt tokens."""
    stored = np.asarray(tokens, dtype=np.int32)
    return hashlib.sha256(model_id.encode("utf-8") + b"\0" + stored.tobytes()).digest()


def state_name(model_id: str, tokens: Sequence[int] | np.ndarray) -> str:
    return state_key(model_id, tokens).hex()[:32] + SUFFIX


def encode_state(model_id: str, tokens: Sequence[int] | np.ndarray, data: bytes) -> bytes:
    stored = np.asarray(tokens, dtype=np.int32)
    body = hashlib.sha256(data).digest()
    return MAGIC + state_key(model_id, stored) + body + len(stored).to_bytes(8, "little") + stored.tobytes() + data


def read_tokens(path: Path, model_id: str) -> np.ndarray | None:
    """The tokens of a trusted state file whose key matches its name and contents; None for anything else."""
    try:
        if not _trusted_file(path):
            return None
        with path.open("rb") as handle:
            head = handle.read(_HEADER)
            if len(head) < _HEADER or not head.startswith(MAGIC):
                return None
            n = int.from_bytes(head[_HEADER - 8 :], "little")
            body = handle.read(4 * n)
    except OSError:
        return None
    if len(body) != 4 * n:
        return None
    tokens = np.frombuffer(body, dtype=np.int32).copy()
    key = state_key(model_id, tokens)
    if head[len(MAGIC) : len(MAGIC) + _DIGEST] != key or path.name != key.hex()[:32] + SUFFIX:
        return None
    return tokens


def read_state(path: Path, model_id: str, tokens: np.ndarray) -> bytes | None:
    """The state bytes, if the file still holds exactly ``tokens`` under this model and its body digest matches."""
    try:
        if not _trusted_file(path):
            return None
        raw = path.read_bytes()
    except OSError:
        return None
    if len(raw) < _HEADER or not raw.startswith(MAGIC):
        return None
    key, body = raw[len(MAGIC) : len(MAGIC) + _DIGEST], raw[len(MAGIC) + _DIGEST : len(MAGIC) + 2 * _DIGEST]
    n = int.from_bytes(raw[_HEADER - 8 : _HEADER], "little")
    stored = np.frombuffer(raw[_HEADER : _HEADER + 4 * n], dtype=np.int32)
    data = raw[_HEADER + 4 * n :]
    if key != state_key(model_id, tokens) or not np.array_equal(stored, tokens):
        return None
    if hashlib.sha256(data).digest() != body:
        return None
    return data


def unsafe_directory(directory: Path) -> str | None:
    """Why ``directory`` (or the one holding it) may not hold prompt states, or None when it may.

    A directory that does not exist yet is fine: `make_private_directory` creates it for this user only.
    """
    for path in (directory, directory.parent):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{path} cannot be inspected: {exc}"
        if not stat.S_ISDIR(info.st_mode):
            return f"{path} is not a directory"
        if info.st_uid != os.getuid():
            return f"{path} is owned by uid {info.st_uid}, not by this user (uid {os.getuid()})"
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return f"{path} is writable by its group or by everyone (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def make_private_directory(directory: Path) -> None:
    """Create ``directory`` (and its parent) readable and writable by this user only."""
    directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.mkdir(mode=0o700, exist_ok=True)


def _trusted_file(path: Path) -> bool:
    info = path.lstat()
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
