"""`evigate eval` / `evigate optimize` / `evigate ui` through the Typer app (scripted LM, tmp MLflow store)."""

from __future__ import annotations

from pathlib import Path

import mlflow
import pytest
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app
from tests.optimize.conftest import scripted_data

_register_commands()
runner = CliRunner()


def test_optimize_prints_baseline_vs_optimized_and_saves(tmp_path: Path, tracking_uri: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    data, lm = scripted_data("verifier", per_split=3)
    monkeypatch.setattr("evigate.optimize.jobs.load_agent_data", lambda *args, **kwargs: data)
    monkeypatch.setattr("evigate.optimize.jobs.resolve_lm",
                        lambda agent, model, injected, threads=None: (lm, model or "dummy"))
    result = runner.invoke(app, ["optimize", "verifier", "--optimizer", "bootstrap", "--budget", "2",
                                 "--model", "scripted", "--program-dir", str(tmp_path / "prog")])
    assert result.exit_code == 0, result.output
    for text in ("baseline", "optimized", "claim_macro_f1", "verdict_accuracy", "wrong_pass_count", "saved"):
        assert text in result.output
    assert (tmp_path / "prog" / "verifier.json").is_file()
    run = mlflow.search_runs(experiment_names=["evigate-verifier"], output_format="list",
                             filter_string="tags.`evigate.job` = 'optimize'")[0]
    assert run.data.params["model"] == "scripted"


def test_eval_prints_metrics(tmp_path: Path, tracking_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data, lm = scripted_data("composer", per_split=2)
    monkeypatch.setattr("evigate.optimize.eval_jobs.load_agent_data", lambda *args, **kwargs: data)
    monkeypatch.setattr("evigate.optimize.eval_jobs.resolve_lm",
                        lambda agent, model, injected, threads=None: (lm, "dummy"))
    result = runner.invoke(app, ["eval", "--agent", "composer", "--split", "test", "--program-dir",
                                 str(tmp_path / "none")])
    assert result.exit_code == 0, result.output
    assert "clean_rate" in result.output and "built-in prompts" in result.output


def test_cli_rejects_unknown_choices_and_reports_errors(tracking_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(app, ["optimize", "router"]).exit_code == 2
    refused = runner.invoke(app, ["eval", "--agent", "planner", "--data", "team.jsonl"])
    assert refused.exit_code == 2 and "not supported for the planner" in refused.output
    assert runner.invoke(app, ["optimize", "verifier", "--optimizer", "annealing"]).exit_code == 2
    assert runner.invoke(app, ["eval", "--split", "holdout"]).exit_code == 2

    def missing_model(agent: str, model: str | None, injected: object, threads: object = None) -> None:
        from evigate.errors import ModelError

        raise ModelError("model file for local/nope is not installed")

    monkeypatch.setattr("evigate.optimize.eval_jobs.resolve_lm", missing_model)
    result = runner.invoke(app, ["eval", "--agent", "verifier", "--limit", "1", "--sets", "demo_world"])
    assert result.exit_code == 2 and "not installed" in result.output


def test_ui_refuses_a_remote_tracking_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow.example:5000")
    result = runner.invoke(app, ["ui", "--port", "0"])
    assert result.exit_code == 2 and "points at a server" in result.output
