"""`evigate optimize program`: stage jobs as children of one run; only agents that measurably gained are compiled,
the program directory's manifest verifies and loads; end to end with and without the compiled program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dspy
import mlflow
import pytest
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app
from evigate.modules.composer import Composer
from evigate.modules.program import DiagnosisProgram, load_program
from evigate.modules.saved_state import read_manifest, sha256_of
from evigate.modules.verifier import Verifier
from evigate.optimize import program_job
from evigate.optimize.jobs import OptimizeConfig, OptimizeResult, run_optimize
from evigate.optimize.program_job import run_program
from evigate.optimize.question_runs import Comparison, ProgramFigures
from tests.optimize.conftest import scripted_data

_register_commands()
runner = CliRunner()

INTERVALS = {"verifier": (0.25, 0.05, 0.45), "composer": (0.10, -0.05, 0.25), "executor": (-0.3, -0.5, -0.1)}


def scripted_job(config: OptimizeConfig) -> OptimizeResult:
    """A stage job with a known outcome per agent: a compiled module saved where the job was told, plus its test
    interval; the planner has no stage data (as before its loader exists)."""
    if config.agent == "planner":
        raise ValueError("unknown agent 'planner'; known: verifier, composer")
    module: Any = Verifier() if config.agent == "verifier" else Composer()
    for _, predictor in module.named_predictors():
        predictor.demos = [dspy.Example(compiled_for=config.agent)]
    path = Path(config.program_dir or "") / f"{config.agent}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    module.save(str(path))
    with mlflow.start_run(run_name=f"optimize-{config.agent}", nested=True) as run:
        result = OptimizeResult(run.info.run_id, run.info.experiment_id, config.tracking_uri or "", path)
    result.intervals = {"test": {"score": INTERVALS[config.agent]}}  # type: ignore[attr-defined]
    return result


def test_only_agents_that_measurably_gained_are_compiled(tmp_path: Path, tracking_uri: str, world_db: Path) -> None:
    target = tmp_path / "program"
    target.mkdir()
    (target / "composer.json").write_text("{}")  # left by an earlier job: not part of this program
    config = OptimizeConfig(agent="program", program_dir=target, tracking_uri=tracking_uri, model="local/m")
    result = run_program(config, command="evigate optimize program --agents …", job=scripted_job)

    outcomes = {outcome.agent: outcome for outcome in result.outcomes}
    assert outcomes["verifier"].kept and not outcomes["composer"].kept and not outcomes["executor"].kept
    assert "includes zero" in outcomes["composer"].reason and "a loss" in outcomes["executor"].reason
    assert outcomes["planner"].reason.startswith("not run: unknown agent 'planner'")
    manifest = read_manifest(target)
    assert manifest["agents"] == ["verifier"] and not (target / "composer.json").exists()
    assert manifest["files"] == {"verifier.json": sha256_of(target / "verifier.json")}
    assert manifest["model"] == "local/m" and manifest["mlflow_run_id"] == result.run_id
    assert manifest["command"] == "evigate optimize program --agents …"
    assert manifest["figures"]["verifier"].items() >= {"test_delta": 0.25, "test_low": 0.05, "test_high": 0.45}.items()
    assert manifest["figures"]["composer"]["kept"] is False

    loaded = load_program(target, database=world_db)
    assert loaded.verifier.judge.demos and loaded.composer.compose.demos == []
    assert loaded.program_choice.compiled == ["verifier"]

    parent = mlflow.get_run(result.run_id)
    assert parent.data.metrics["verifier_kept"] == 1.0 and parent.data.metrics["composer_test_low"] == -0.05
    children = mlflow.search_runs(experiment_ids=[parent.info.experiment_id], output_format="list",
                                  filter_string=f"tags.mlflow.parentRunId = '{result.run_id}'")
    assert {child.info.run_id for child in children} == {outcomes[a].run_id for a in ("verifier", "composer",
                                                                                    "executor")}


def test_the_stage_job_runs_as_a_nested_child_of_the_program_run(tmp_path: Path, tracking_uri: str,
                                                                 world_db: Path) -> None:
    data, lm = scripted_data("verifier", per_split=3)
    config = OptimizeConfig(agent="program", optimizer="bootstrap", budget=2, program_dir=tmp_path / "program",
                            tracking_uri=tracking_uri, model="dummy")
    result = run_program(config, ["verifier"], job=lambda stage: run_optimize(stage, lm=lm, data=data))
    [outcome] = result.outcomes
    child = mlflow.get_run(outcome.run_id or "")
    assert child.data.tags["mlflow.parentRunId"] == result.run_id
    assert child.info.experiment_id == mlflow.get_run(result.run_id).info.experiment_id
    manifest = read_manifest(tmp_path / "program")
    assert manifest["files"] == {f"{a}.json": sha256_of(tmp_path / "program" / f"{a}.json") for a in manifest["agents"]}
    assert load_program(tmp_path / "program", database=world_db).program_choice.compiled == manifest["agents"]


def test_end_to_end_figures_are_logged_to_the_program_run(tmp_path: Path, tracking_uri: str) -> None:
    figures = ProgramFigures(asked=4, ran=4, answerable=3, useful=2, wrong=0, junk=1, normal=2, p50_round_seconds=9.0)
    seen: list[tuple[Path, str, int]] = []

    def compare(directory: Path, model: str, limit: int) -> Comparison:
        seen.append((directory, model, limit))
        return Comparison(figures, figures, (0.0, -0.2, 0.2), 1.0, {})

    config = OptimizeConfig(agent="program", program_dir=tmp_path / "p", tracking_uri=tracking_uri, model="local/m")
    result = run_program(config, ["verifier"], end_to_end=4, job=scripted_job, compare=compare)
    assert seen == [(tmp_path / "p", "local/m", 4)]
    metrics = mlflow.get_run(result.run_id).data.metrics
    assert metrics["e2e_compiled_useful"] == 2 and metrics["e2e_useful_delta_low"] == -0.2
    assert metrics["e2e_p50_ratio"] == 1.0


def test_cli_prints_each_agents_interval_and_whether_it_was_compiled(
    tmp_path: Path, tracking_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(program_job, "run_optimize", lambda stage, progress: scripted_job(stage))
    out = runner.invoke(app, ["optimize", "program", "--agents", "verifier,composer", "--program-dir",
                              str(tmp_path / "p"), "--model", "local/m"], terminal_width=200)
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.replace("│", " ").split())
    assert "verifier +0.250 [+0.050, +0.450] yes" in text and "composer +0.100 [-0.050, +0.250] no" in text
    assert "agents: verifier" in text
    command = read_manifest(tmp_path / "p")["command"]
    assert command.startswith("evigate optimize program --agents verifier,composer --optimizer bootstrap --budget 8")
    assert f"--model local/m --program-dir {tmp_path / 'p'}" in command
    bad = runner.invoke(app, ["optimize", "program", "--agents", "verifier,judge"])
    assert bad.exit_code == 2 and "unknown agent(s) judge" in bad.output


def test_compare_programs_asks_both_and_pairs_useful_by_question(world_db: Path, tmp_path: Path) -> None:
    from evigate.datasets.questions import load_questions
    from evigate.demo.catalog import INCIDENTS
    from evigate.optimize.question_runs import compare_programs
    from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
    from tests.modules.test_program_routing import good_claims

    def scripted(name: str) -> DiagnosisProgram:
        return DiagnosisProgram.from_settings(
            database=world_db, planner=ScriptedPlanner(), executor=ScriptedExecutor(good_claims),
            verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"}),
            composer=ScriptedComposer(),
        )

    questions = load_questions(split="test")[:2]
    order: list[str] = []
    comparison = compare_programs(scripted("a"), scripted("b"), questions, INCIDENTS,
                                  on_answer=lambda which, answer: order.append(f"{which}:{answer.id}"))
    assert order == [f"compiled:{questions[0].id}", f"built-in:{questions[0].id}",
                     f"built-in:{questions[1].id}", f"compiled:{questions[1].id}"]
    assert comparison.compiled.asked == comparison.builtin.asked == 2 and comparison.compiled.ran == 2
    assert comparison.useful_delta[0] == 0.0  # the same scripted program on both sides
    assert comparison.p50_ratio is not None and json.dumps(comparison.metrics())


def test_the_loop_ask_label_optimize_then_deploy_by_program_dir(
    private_world: Path, tmp_path: Path, tracking_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ask → `evigate label` → fill in → `optimize verifier --data` → EVIGATE_PROGRAM_DIR: the next program runs the
    team's compiled Verifier instead of the shipped program."""
    from dspy.utils import DummyLM

    from evigate.datasets import load_own_cases
    from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
    from tests.modules.test_program_routing import LOG_FACT, QUERY, good_claims
    from tests.optimize.conftest import verifier_answer
    from tests.optimize.test_own_incidents import labelled_folder

    monkeypatch.delenv("EVIGATE_PROGRAM_DIR", raising=False)
    asked = DiagnosisProgram.from_settings(
        database=private_world, planner=ScriptedPlanner(), executor=ScriptedExecutor(good_claims),
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "overstated"}),
        composer=ScriptedComposer(),
    )
    session_id = asked(query=QUERY).session_id
    asked.store.close()
    folder = labelled_folder(session_id, private_world, tmp_path)
    lm = DummyLM({LOG_FACT: verifier_answer(load_own_cases(folder, "verifier")[0])}, adapter=dspy.JSONAdapter())
    ours = tmp_path / "artifacts" / "ours"
    run_optimize(OptimizeConfig(agent="verifier", budget=1, max_demos=1, labeled_demos=1, program_dir=ours,
                                tracking_uri=tracking_uri, data_path=folder), lm=lm)
    saved_demos = json.loads((ours / "verifier.json").read_text())["judge"]["demos"]

    monkeypatch.setenv("EVIGATE_PROGRAM_DIR", str(ours))
    deployed = DiagnosisProgram.from_settings(database=private_world)
    assert (deployed.program_choice.source, deployed.program_choice.compiled) == ("configured", ["verifier"])
    assert len(deployed.verifier.judge.demos) == len(saved_demos) >= 1


def test_compare_compiled_refuses_to_compare_a_configured_program_with_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.bench.scripts import load_bench

    (tmp_path / "ours").mkdir()
    monkeypatch.setenv("EVIGATE_PROGRAM_DIR", str(tmp_path / "ours"))
    bench = load_bench("questions")
    assert bench.main(["--split", "test", "--limit", "1", "--compare-compiled", "--out", str(tmp_path / "a")]) == 2
    assert "unset program_dir / EVIGATE_PROGRAM_DIR to compare" in " ".join(capsys.readouterr().err.split())
