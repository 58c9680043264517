"""Reading a file evigate was pointed at, bounded: a regular file of at most `limit` bytes, or a clear error.

`st_size` is no bound: it is 0 for /dev/zero, a FIFO, /dev/stdin and /proc files, which then read without end (one
`evigate verify -a /dev/zero` reached 24 GB). So the file is opened without blocking (a FIFO with no writer would
block a plain `open` forever), refused unless it is a regular file, and read `limit + 1` bytes at most: one byte
past the cap is an error, never a silently shortened text. Every file the product reads from a path goes through
here: `evigate verify` answers and contexts, domain.yaml, skills and knowledge documents (`read_yaml_bounded` also
refuses YAML nested too deep to build).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from evigate.errors import ConfigError, InputFileError

DEFAULT_LIMIT = 20_000_000
"""Bytes a file handed to evigate may hold unless the caller says otherwise (20 MB)."""

CONFIG_LIMIT = 5_000_000
"""Bytes a YAML configuration file (domain.yaml, a skill) may hold (5 MB)."""

MAX_YAML_DEPTH = 100
"""Nesting depth of YAML mappings and lists accepted: PyYAML composes recursively, so 10,000 nested `[` raise
RecursionError; the depth is measured on the parser's events (which do not recurse) before anything is built."""

_CHUNK = 1 << 20


def _kind(mode: int) -> str:
    """What a non-regular file is, in words for an error message."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def regular_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why `path` is not a readable regular file (it does not exist, is a FIFO, a device …), or None when it is.

    A stat only (it follows symlinks and never opens the file), for code that hands paths to another reader
    (DuckDB reading log files) and must drop a FIFO or a device before that reader blocks on it.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return None if stat.S_ISREG(mode) else f"is {_kind(mode)}, not a regular file"


def read_bytes_bounded(path: str | os.PathLike[str], *, what: str = "file", limit: int = DEFAULT_LIMIT) -> bytes:
    """The bytes of the regular file `path`; InputFileError naming `what` and the path for anything else.

    Refused: a missing or unreadable path, a directory, FIFO, device or socket, and a file longer than `limit`
    bytes (measured by reading, so a /proc file or a file growing while read cannot get past the cap).
    """
    label = f"{what} {path}"
    problem = regular_file_problem(path)
    if problem is not None:
        raise InputFileError(f"{label} {problem}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(path, flags)
    except PermissionError:
        raise InputFileError(f"{label} is not readable (permission denied)") from None
    except OSError as exc:
        raise InputFileError(f"{label} cannot be read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):  # swapped for a FIFO or device between the stat and the open
            raise InputFileError(f"{label} is {_kind(mode)}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputFileError(f"{label} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)
    if size > limit:
        raise InputFileError(f"{label} is larger than {_size(limit)}; evigate reads at most that much")
    return b"".join(chunks)


def read_text_bounded(path: str | os.PathLike[str], *, what: str = "file", limit: int = DEFAULT_LIMIT,
                      errors: str = "strict") -> str:
    """`read_bytes_bounded` decoded as UTF-8; with `errors="strict"`, InputFileError for bytes that are not UTF-8."""
    data = read_bytes_bounded(path, what=what, limit=limit)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{what} {Path(path)} is not UTF-8 text (byte {exc.start}: "
                             f"{data[exc.start:exc.start + 1]!r})") from None


def read_yaml_bounded(path: str | os.PathLike[str], *, what: str = "file", limit: int = CONFIG_LIMIT) -> Any:
    """The YAML document in `path` (safe loader); ConfigError naming the file for an unreadable file, text that is
    not UTF-8, invalid YAML or nesting deeper than MAX_YAML_DEPTH."""
    try:
        text = read_text_bounded(path, what=what, limit=limit)
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise ConfigError(f"{path}: YAML nested deeper than {MAX_YAML_DEPTH} levels "
                                      f"(line {event.start_mark.line + 1})")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    except RecursionError:  # a construct the depth count does not see; never a traceback
        raise ConfigError(f"{path}: YAML nested too deeply to read") from None


def _size(limit: int) -> str:
    if limit >= 1_000_000 and limit % 1_000_000 == 0:
        return f"{limit // 1_000_000} MB"
    if limit >= 1_000 and limit % 1_000 == 0:
        return f"{limit // 1_000} kB"
    return f"{limit} bytes"
