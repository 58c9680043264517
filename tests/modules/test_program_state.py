"""Saved program state is untrusted: digests from the manifest, no planted `lm`, only the configured program_dir."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest

from evigate.cli.diagnose import build_program
from evigate.errors import ConfigError
from evigate.modules.program import DiagnosisProgram, load_program
from evigate.modules.saved_state import record_state_file, sha256_of


def saved_program(world_db: Path, directory: Path) -> Path:
    program = DiagnosisProgram.from_settings(database=world_db)
    program.verifier.judge.demos = [dspy.Example(verifier_input="x", judgement="y")]
    return program.save(directory)


def plant(state_file: Path, **predictor_keys: object) -> None:
    """Rewrite a saved state as an attacker would, manifest digest included."""
    state = json.loads(state_file.read_text())
    for name, value in state.items():
        if name != "metadata":
            value.update(predictor_keys)
    state_file.write_text(json.dumps(state))
    record_state_file(state_file)


def test_save_records_a_sha256_per_state_file(world_db: Path, tmp_path: Path) -> None:
    directory = saved_program(world_db, tmp_path / "program")
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["files"] == {f"{a}.json": sha256_of(directory / f"{a}.json") for a in manifest["agents"]}


def test_a_planted_lm_and_unknown_keys_are_stripped_on_load(world_db: Path, tmp_path: Path) -> None:
    directory = saved_program(world_db, tmp_path / "program")
    plant(directory / "verifier.json", lm={"model": "openai/attacker-model", "model_type": "chat"},
          planted_attribute="x", forward="not a method")
    loaded = load_program(directory, database=world_db)
    predictor = loaded.verifier.judge
    assert predictor.lm is None  # the configured model stays in charge
    assert len(predictor.demos) == 1  # the compiled demos still load
    assert not hasattr(predictor, "planted_attribute")
    assert callable(predictor.forward)


def test_a_state_file_changed_after_save_is_refused_naming_the_file(world_db: Path, tmp_path: Path) -> None:
    directory = saved_program(world_db, tmp_path / "program")
    state_file = directory / "verifier.json"
    state = json.loads(state_file.read_text())
    state["judge"]["demos"] = []
    state_file.write_text(json.dumps(state))
    with pytest.raises(ConfigError, match=r"verifier\.json does not match the digest"):
        load_program(directory, database=world_db)


def test_a_state_file_the_manifest_does_not_list_is_refused(world_db: Path, tmp_path: Path) -> None:
    directory = saved_program(world_db, tmp_path / "program")
    manifest = json.loads((directory / "manifest.json").read_text())
    del manifest["files"]["composer.json"]
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match=r"composer\.json is not recorded"):
        load_program(directory, database=world_db)


def test_ask_does_not_load_a_program_planted_in_the_current_directory(
    world_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVIGATE_PROGRAM_DIR", raising=False)
    monkeypatch.delenv("EVIGATE_SETTINGS", raising=False)
    monkeypatch.chdir(tmp_path)
    planted = saved_program(world_db, tmp_path / "artifacts" / "program")  # the default program_dir, relative
    (planted / "verifier.json").write_text("{not even json")  # any attempt to load it would fail loudly
    program = build_program(None, world_db, None)
    assert program.verifier.judge.demos == []
    # Configured explicitly, the same directory is what the user asked for: it is loaded (and checked).
    monkeypatch.setenv("EVIGATE_PROGRAM_DIR", str(planted))
    with pytest.raises(ConfigError, match=r"verifier\.json"):
        build_program(None, world_db, None)
