"""Persisted prompt states: a planted, renamed, foreign or altered file is never restored; unsafe folders refused."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from evigate.llm.prefix_cache import PrefixCache
from evigate.llm.state_files import encode_state, state_name

SYSTEM = list(range(100, 164))  # 64 tokens: long enough to be worth a restore
OTHER = list(range(500, 564))


def persisted(directory: Path, tokens: list[int], data: bytes, model_id: str = "model-a") -> Path:
    cache = PrefixCache(capacity_bytes=0, disk_dir=directory, model_id=model_id)
    cache.persist(tokens, data)
    (path,) = directory.glob("*.kv")
    return path


def fresh(directory: Path, model_id: str = "model-a") -> PrefixCache:
    return PrefixCache(capacity_bytes=0, disk_dir=directory, model_id=model_id)


def test_a_state_written_by_this_model_is_restored(tmp_path: Path) -> None:
    persisted(tmp_path / "states", SYSTEM, b"kv-of-system")
    match = fresh(tmp_path / "states").best([*SYSTEM, 1, 2])
    assert match is not None and match.load() == b"kv-of-system"
    assert (os.stat(tmp_path / "states").st_mode & 0o077) == 0  # created for this user only


def test_a_planted_state_under_the_prompts_name_is_not_restored(tmp_path: Path) -> None:
    """The attack: another prompt's KV state saved under this prompt's file name and header tokens."""
    directory = tmp_path / "states"
    path = persisted(directory, SYSTEM, b"kv-of-system")
    planted = bytearray(path.read_bytes())
    planted[-len(b"kv-of-system") :] = b"kv-of-OTHERS"  # the model would read other text than the audit shows
    path.write_bytes(bytes(planted))
    cache = fresh(directory)
    match = cache.best([*SYSTEM, 1])
    assert match is None or match.load() is None


def test_a_file_whose_tokens_do_not_match_its_name_is_ignored(tmp_path: Path) -> None:
    directory = tmp_path / "states"
    directory.mkdir(mode=0o700)
    # The state of OTHER, filed under SYSTEM's name: the digest in the header and the name disagree with the tokens.
    (directory / state_name("model-a", SYSTEM)).write_bytes(encode_state("model-a", OTHER, b"kv"))
    os.chmod(directory / state_name("model-a", SYSTEM), 0o600)
    assert fresh(directory).best([*OTHER, 1]) is None
    assert fresh(directory).best([*SYSTEM, 1]) is None


def test_a_state_of_another_model_is_not_restored(tmp_path: Path) -> None:
    persisted(tmp_path / "states", SYSTEM, b"kv", model_id="model-a")
    assert fresh(tmp_path / "states", model_id="model-b").best([*SYSTEM, 1]) is None


def test_a_state_file_others_may_write_is_ignored(tmp_path: Path) -> None:
    path = persisted(tmp_path / "states", SYSTEM, b"kv")
    os.chmod(path, 0o666)
    assert fresh(tmp_path / "states").best([*SYSTEM, 1]) is None


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_a_group_or_world_writable_directory_is_refused(tmp_path: Path, mode: int) -> None:
    directory = tmp_path / "states"
    persisted(directory, SYSTEM, b"kv")
    os.chmod(directory, mode)
    cache = fresh(directory)
    assert cache.refused is not None and "writable" in cache.refused
    assert cache.disk_dir is None and cache.best([*SYSTEM, 1]) is None
    cache.persist(OTHER, b"kv")  # nothing written there either
    assert len(list(directory.glob("*.kv"))) == 1


def test_a_writable_parent_directory_is_refused_too(tmp_path: Path) -> None:
    parent = tmp_path / "shared"
    persisted(parent / "states", SYSTEM, b"kv")
    os.chmod(parent, 0o777)  # anyone could swap the states folder itself
    assert fresh(parent / "states").refused is not None


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to hand a directory to another user")
def test_a_directory_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "states"
    persisted(directory, SYSTEM, b"kv")
    os.chown(directory, 65534, 65534)  # nobody
    cache = fresh(directory)
    assert cache.refused is not None and "owned by uid 65534" in cache.refused
    assert cache.best([*SYSTEM, 1]) is None


def test_tokens_round_trip_exactly(tmp_path: Path) -> None:
    tokens = [0, 1, 2**31 - 1, *SYSTEM]
    persisted(tmp_path / "s", tokens, b"x")
    match = fresh(tmp_path / "s").best(tokens)
    assert match is not None and np.array_equal(match.tokens, np.asarray(tokens, dtype=np.int32))
