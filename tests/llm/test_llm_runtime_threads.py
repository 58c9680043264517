"""Threads per call: every core when the machine is idle, fewer when other processes hold cores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evigate.llm import runtime


def _samples(*pairs: tuple[int, int]) -> Iterator[tuple[int, int]]:
    yield from pairs


@pytest.mark.parametrize(
    ("busy_delta", "total_delta", "cores", "expected"),
    [
        (5, 200, 2, 2),  # idle: both cores
        (100, 200, 2, 1),  # one core busy elsewhere
        (190, 200, 2, 1),  # both busy: never below one
        (60, 200, 2, 1),  # 0.6 of a core busy: a core is free only when at least 70% idle
        (100, 400, 4, 3),
    ],
)
def test_free_cores_decide(
    monkeypatch: pytest.MonkeyPatch, busy_delta: int, total_delta: int, cores: int, expected: int
) -> None:
    monkeypatch.delenv(runtime.THREADS_ENV, raising=False)
    monkeypatch.setattr(runtime.os, "cpu_count", lambda: cores)
    samples = _samples((1000, 5000), (1000 + busy_delta, 5000 + total_delta))
    monkeypatch.setattr(runtime, "_cpu_times", lambda: next(samples))
    assert runtime.threads_for_next_call(sample_seconds=0) == expected


def test_the_environment_pins_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(runtime.THREADS_ENV, "3")
    monkeypatch.setattr(runtime, "_cpu_times", lambda: pytest.fail("no sampling when pinned"))
    assert runtime.threads_for_next_call() == 3


def test_without_proc_stat_every_core_but_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(runtime.THREADS_ENV, raising=False)
    monkeypatch.setattr(runtime.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(runtime, "_cpu_times", lambda: None)
    assert runtime.threads_for_next_call(sample_seconds=0) == 3


def test_proc_stat_is_read_on_linux() -> None:
    times = runtime._cpu_times()
    if times is not None:
        busy, total = times
        assert 0 <= busy <= total
