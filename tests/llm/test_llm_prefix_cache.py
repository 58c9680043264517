"""PrefixCache: longest-prefix lookup over RAM and disk states, atomic files, damaged files dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from evigate.llm.prefix_cache import MIN_PREFIX_TOKENS, PrefixCache, common_prefix

SYSTEM = list(range(1000, 1000 + 3 * MIN_PREFIX_TOKENS))


@given(st.lists(st.integers(0, 5), max_size=30), st.lists(st.integers(0, 5), max_size=30))
def test_common_prefix_matches_the_obvious_definition(a: list[int], b: list[int]) -> None:
    expected = 0
    while expected < min(len(a), len(b)) and a[expected] == b[expected]:
        expected += 1
    assert common_prefix(a, b) == expected


def test_the_longest_shared_prefix_wins_and_short_overlaps_are_ignored() -> None:
    cache = PrefixCache(capacity_bytes=1 << 20)
    cache.remember([*SYSTEM, 1, 2, 3], b"agent-a")
    cache.remember([*SYSTEM, 1, 2, 9, 9], b"agent-a-longer")
    cache.remember(list(range(MIN_PREFIX_TOKENS - 1)), b"too-short")
    match = cache.best([*SYSTEM, 1, 2, 9, 5])
    assert match is not None and match.length == len(SYSTEM) + 3 and match.load() == b"agent-a-longer"
    assert cache.best([*list(range(MIN_PREFIX_TOKENS - 1)), 7, 7]) is None
    assert cache.best([5, 5, 5]) is None


def test_ram_states_are_evicted_oldest_first_within_the_byte_budget() -> None:
    cache = PrefixCache(capacity_bytes=10)
    cache.remember([*SYSTEM, 1], b"x" * 6)
    cache.remember([*SYSTEM, 2], b"y" * 6)  # 12 bytes > 10: the first goes
    match = cache.best([*SYSTEM, 1])
    assert match is not None and match.load() == b"y" * 6
    cache.remember([*SYSTEM, 3], b"z" * 11)  # larger than the whole budget: not kept at all
    assert cache.best([*SYSTEM, 3]).load() == b"y" * 6  # type: ignore[union-attr]


def test_persisted_states_are_found_by_a_new_process(tmp_path: Path) -> None:
    first = PrefixCache(capacity_bytes=0, disk_dir=tmp_path)
    first.persist(SYSTEM, b"kv-bytes")
    assert first.on_disk(SYSTEM) and not first.on_disk(SYSTEM[:-1])
    assert not list(tmp_path.glob("*.tmp"))  # written atomically
    later = PrefixCache(capacity_bytes=0, disk_dir=tmp_path)
    match = later.best([*SYSTEM, 42, 43])
    assert match is not None and match.length == len(SYSTEM) and match.path is not None
    assert match.load() == b"kv-bytes"
    assert np.array_equal(match.tokens, np.asarray(SYSTEM, dtype=np.int32))


def test_a_damaged_file_is_skipped_and_a_failed_state_forgotten(tmp_path: Path) -> None:
    (tmp_path / "junk.kv").write_bytes(b"not a state")
    cache = PrefixCache(capacity_bytes=0, disk_dir=tmp_path)
    assert cache.best(SYSTEM) is None
    cache.persist(SYSTEM, b"stale")
    match = cache.best([*SYSTEM, 1])
    assert match is not None
    cache.forget(match)
    assert cache.best([*SYSTEM, 1]) is None and not match.path.exists()  # type: ignore[union-attr]


def test_the_disk_keeps_only_the_newest_files(tmp_path: Path) -> None:
    cache = PrefixCache(capacity_bytes=0, disk_dir=tmp_path, max_disk_files=2)
    for tail in range(4):
        cache.persist([*SYSTEM, tail], b"s")
    assert len(list(tmp_path.glob("*.kv"))) == 2


def test_an_unwritable_directory_costs_only_the_warm_start(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = PrefixCache(capacity_bytes=0, disk_dir=blocker / "sub")
    cache.persist(SYSTEM, b"s")  # logged, not raised
    assert cache.best(SYSTEM) is None


def test_the_pinned_opening_ends_before_the_final_user_turn() -> None:
    from evigate.llm.prefix_reuse import stable_end

    system = {"role": "system", "content": "instructions"}
    demo_q, demo_a = {"role": "user", "content": "demo question"}, {"role": "assistant", "content": "demo answer"}
    ask = {"role": "user", "content": "the question"}
    assert stable_end([system, ask]) == "instructions"
    assert stable_end([system, demo_q, demo_a, ask]) == "demo answer"  # demos are part of the fixed opening
    assert stable_end([ask]) is None and stable_end([system, demo_q, demo_a]) is None
