"""The program shipped compiled for the embedded model: loaded by default into evigate's own agents, for its model
only; one setting turns it off, a configured program_dir wins, a damaged file is refused."""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from evigate.errors import ConfigError
from evigate.modules import compiled_program
from evigate.modules.compiled_program import SHIPPED_PROGRAM_DIR
from evigate.modules.program import DiagnosisProgram, load_program
from evigate.modules.saved_state import read_manifest, sha256_of, write_program_manifest
from evigate.modules.verifier import Verifier
from evigate.settings import DEFAULT_LOCAL_MODEL

DEMO = dspy.Example(verifier_input="shipped-x", judgement="shipped-y")


def compiled_dir(directory: Path, agent: str = "verifier", model: str = DEFAULT_LOCAL_MODEL) -> Path:
    """A program directory holding one compiled agent (one demo), as `evigate optimize program` writes it."""
    directory.mkdir(parents=True)
    module = Verifier()
    module.judge.demos = [DEMO]
    if agent == "composer":
        from evigate.modules.composer import Composer

        module = Composer()
        module.compose.demos = [dspy.Example(composer_input="c", composer_output="o")]
    module.save(str(directory / f"{agent}.json"))
    write_program_manifest(directory, [agent], model=model, executor_mode="plan", mlflow_run_id="run-1")
    return directory


@pytest.fixture()
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("EVIGATE_PROGRAM_DIR", "EVIGATE_COMPILED_PROGRAM", "EVIGATE_SETTINGS", "EVIGATE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    directory = compiled_dir(tmp_path / "shipped")
    monkeypatch.setattr(compiled_program, "SHIPPED_PROGRAM_DIR", directory)
    return directory


def test_the_shipped_program_is_loaded_by_default(shipped: Path, world_db: Path) -> None:
    program = DiagnosisProgram.from_settings(database=world_db)
    assert program.verifier.judge.demos[0]["judgement"] == "shipped-y"
    assert program.composer.compose.demos == []  # not compiled: built-in prompts
    record = program.program_choice.record()
    assert record["source"] == "shipped" and record["compiled_agents"] == ["verifier"]
    assert record["mlflow_run_id"] == "run-1" and record["builtin_agents"]["composer"] == "not compiled"


@pytest.mark.parametrize("how", ["override", "env"])
def test_one_setting_turns_it_off(shipped: Path, world_db: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    if how == "env":
        monkeypatch.setenv("EVIGATE_COMPILED_PROGRAM", "false")
        program = DiagnosisProgram.from_settings(database=world_db)
    else:
        program = DiagnosisProgram.from_settings(database=world_db, compiled_program=False)
    assert program.verifier.judge.demos == []
    assert program.program_choice.source == "built-in"
    assert program.program_choice.builtin["verifier"] == "compiled_program is off"


def test_a_configured_program_dir_wins(shipped: Path, world_db: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    mine = compiled_dir(tmp_path / "mine", agent="composer", model="openai/some-other-model")
    monkeypatch.setenv("EVIGATE_PROGRAM_DIR", str(mine))
    program = DiagnosisProgram.from_settings(database=world_db)
    assert len(program.composer.compose.demos) == 1  # the user's, whatever model it was compiled for
    assert program.verifier.judge.demos == []  # nothing of the shipped program is mixed in
    assert (program.program_choice.source, program.program_choice.directory) == ("configured", mine)
    # load_program(path) is the same choice, made by the caller
    assert load_program(mine, database=world_db).program_choice.compiled == ["composer"]


def test_a_configured_program_dir_that_does_not_exist_is_a_config_error(shipped: Path, world_db: Path,
                                                                         tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no saved program at .*typo.*program_dir is configured"):
        DiagnosisProgram.from_settings(database=world_db, program_dir=str(tmp_path / "typo"))


def test_a_tampered_shipped_file_is_refused_never_loaded(shipped: Path, world_db: Path) -> None:
    state = json.loads((shipped / "verifier.json").read_text())
    state["judge"]["demos"][0]["judgement"] = "planted"
    (shipped / "verifier.json").write_text(json.dumps(state))
    with pytest.raises(ConfigError, match=r"shipped compiled program is damaged: .*verifier\.json does not match the "
                                          r"digest.*EVIGATE_COMPILED_PROGRAM=false"):
        DiagnosisProgram.from_settings(database=world_db)
    # the way out the message names works, and runs the built-in prompts
    program = DiagnosisProgram.from_settings(database=world_db, compiled_program=False)
    assert program.verifier.judge.demos == []


def test_injected_agents_never_get_the_state(shipped: Path, world_db: Path) -> None:
    mine = Verifier()
    program = DiagnosisProgram.from_settings(database=world_db, verifier=mine)
    assert program.verifier is mine and mine.judge.demos == []
    assert program.program_choice.builtin["verifier"].startswith("injected")


def test_another_model_keeps_the_built_in_prompts(shipped: Path, world_db: Path) -> None:
    program = DiagnosisProgram.from_settings(database=world_db, models={"default": "openai/gpt-4o-mini"})
    assert program.verifier.judge.demos == []
    assert program.program_choice.builtin["verifier"] == f"compiled for {DEFAULT_LOCAL_MODEL}, runs openai/gpt-4o-mini"
    # an injected LM is the model the agent runs with
    dummy = DummyLM([{"judgement": "{}"}])
    injected = DiagnosisProgram.from_settings(database=world_db, lms={"verifier": dummy})
    assert injected.verifier.judge.demos == [] and "runs dummy" in injected.program_choice.builtin["verifier"]


def test_the_real_shipped_program_is_valid_and_its_digests_verify(world_db: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVIGATE_PROGRAM_DIR", "EVIGATE_COMPILED_PROGRAM", "EVIGATE_SETTINGS", "EVIGATE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    manifest = read_manifest(SHIPPED_PROGRAM_DIR)
    assert manifest["evigate_program"] == 1 and manifest["model"] == DEFAULT_LOCAL_MODEL
    assert manifest["files"] == {f"{a}.json": sha256_of(SHIPPED_PROGRAM_DIR / f"{a}.json") for a in manifest["agents"]}
    assert sorted(p.name for p in SHIPPED_PROGRAM_DIR.glob("*.json")) == sorted(["manifest.json", *manifest["files"]])
    for agent in manifest["agents"]:  # every compiled agent says what it gained, and by which run and command
        figures = manifest["figures"][agent]
        assert figures["test_low"] > 0 and manifest["mlflow_run_id"] and manifest["command"]
    program = DiagnosisProgram.from_settings(database=world_db)
    assert program.program_choice.source == "shipped"
    assert program.program_choice.compiled == manifest["agents"]  # compiled for the embedded default model


def test_the_session_records_which_program_answered_and_show_prints_it(shipped: Path, private_world: Path) -> None:
    from typer.testing import CliRunner

    from evigate.cli.app import _register_commands, app
    from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
    from tests.modules.test_program_routing import QUERY, good_claims

    program = DiagnosisProgram.from_settings(
        database=private_world, planner=ScriptedPlanner(), executor=ScriptedExecutor(good_claims),
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"}),
        composer=ScriptedComposer(),
    )
    result = program(query=QUERY)
    recorded = program.store.session(result.session_id)["settings"]["program"]
    program.store.close()
    assert recorded == program.program_choice.record() and recorded["source"] == "shipped"
    assert recorded["builtin_agents"]["verifier"].startswith("injected")
    _register_commands()
    shown = CliRunner().invoke(app, ["show", result.session_id, "--database", str(private_world)])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "program: shipped" in text and "· compiled agents: none" in text  # (the path may wrap)
