"""Issue 22 finding 5: every file evigate reads from a path is read bounded, and `evigate verify -a /dev/zero` (or a
FIFO, /dev/stdin, a /proc file) ends in one clear line with exit 2, never an unbounded read or a MemoryError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.errors import ConfigError, InputFileError
from evigate.files import read_bytes_bounded, read_text_bounded, read_yaml_bounded

LOG = "pay-gateway 调用 unionpay 超时，耗时 5300 ms，readTimeout 为 3000 ms。"
# A hard cap on the child's memory: the old reader of /dev/zero grows until this kills it with MemoryError (exit 1).
MEMORY_CAP = 1_500_000_000


def _fifo(tmp_path: Path, name: str = "pipe.txt") -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path)  # no writer: a plain open() would block forever (the test would hang, not fail)
    with pytest.raises(InputFileError, match=r"answer file .*pipe\.txt is a FIFO"):
        read_bytes_bounded(fifo, what="answer file")


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "character device"), ("/dev/null", "character device")])
def test_devices_are_refused(path: str, kind: str) -> None:
    with pytest.raises(InputFileError, match=kind):
        read_bytes_bounded(path)


def test_a_proc_file_reporting_size_zero_is_read_but_only_up_to_the_cap() -> None:
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0  # what the old st_size check trusted
    assert b"Name:" in read_bytes_bounded(status)
    with pytest.raises(InputFileError, match="larger than 10 bytes"):
        read_bytes_bounded(status, limit=10)


@settings(max_examples=30, deadline=None)
@given(size=st.integers(0, 300), limit=st.integers(0, 200))
def test_a_file_is_returned_whole_or_refused_never_cut(tmp_path_factory: pytest.TempPathFactory, size: int,
                                                       limit: int) -> None:
    path = tmp_path_factory.mktemp("sized") / "f.bin"
    path.write_bytes(b"x" * size)
    if size <= limit:
        assert read_bytes_bounded(path, limit=limit) == b"x" * size
    else:
        with pytest.raises(InputFileError, match="larger than"):
            read_bytes_bounded(path, limit=limit)


def test_text_that_is_not_utf8_is_named_or_replaced(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(InputFileError, match=r"latin1\.md is not UTF-8"):
        read_text_bounded(path, what="knowledge document")
    assert read_text_bounded(path, errors="replace") == "caf\ufffd"


def test_deeply_nested_yaml_is_a_config_error_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "domain.yaml"
    path.write_text("a: " + "[" * 10_000 + "]" * 10_000 + "\n")
    with pytest.raises(ConfigError, match="nested deeper than"):
        read_yaml_bounded(path)
    path.write_text("a: " + "{b: " * 50 + "1" + "}" * 50 + "\n")
    assert read_yaml_bounded(path)["a"]["b"]["b"]  # ordinary nesting still loads


def _verify(*args: str, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    code = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP})); "
            "sys.argv = ['evigate', *sys.argv[1:]]; from evigate.cli import main; main()")
    return subprocess.run([sys.executable, "-c", code, "verify", *args], capture_output=True, text=True,
                          timeout=180, stdin=stdin)


@pytest.mark.parametrize("answer", ["/dev/zero", "/dev/stdin", "fifo"])
def test_verify_cli_refuses_unbounded_answers_with_exit_2(tmp_path: Path, answer: str) -> None:
    context = tmp_path / "gateway.log"
    context.write_text(LOG, encoding="utf-8")
    if answer == "fifo":
        answer = str(_fifo(tmp_path, "answer.txt"))
    with open("/dev/zero", "rb") as zero:  # /dev/stdin is /dev/zero for the child: endless too
        done = _verify("-a", answer, "-c", str(context), stdin=zero.fileno())
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr + done.stdout
    assert "MemoryError" not in done.stderr


def test_verify_cli_refuses_an_unbounded_context_with_exit_2(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("pay-gateway 耗时 5300 ms。", encoding="utf-8")
    done = _verify("-a", str(answer), "-c", "/dev/zero")
    assert done.returncode == 2 and "context file /dev/zero is a character device" in done.stderr


def test_a_settings_file_that_is_a_fifo_or_a_device_is_a_config_error(tmp_path: Path) -> None:
    from evigate.settings import load_settings

    for path in (_fifo(tmp_path, "settings.yaml"), Path("/dev/zero")):
        with pytest.raises(ConfigError, match="not a regular file"):
            load_settings(path)
