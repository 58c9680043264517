"""Intervals on each delta, the program diff and every trial as a child run: LM-free (scripted DummyLM)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import mlflow
import pytest

from evigate.optimize.intervals import delta_intervals, interval_metrics, verdict_line
from evigate.optimize.jobs import OptimizeConfig, run_optimize
from evigate.optimize.optimizers import OptimizerSettings, compile_with
from evigate.optimize.program_diff import PredictorView, predictor_views, render_demo, render_diff
from evigate.optimize.trials import Trial, trial_params, trials_of
from evigate.signatures.preview import split_preview
from tests.optimize.conftest import scripted_data
from tests.optimize.test_optimize_jobs import ScriptedReflectionLM


@dataclass
class Scored:
    case_id: str
    score: float
    verdict_correct: bool = False


def test_intervals_pair_examples_by_case_id_not_by_position() -> None:
    before = [Scored(f"c{i}", 0.0) for i in range(12)]
    after = [Scored(f"c{i}", 1.0 if i % 2 else 0.0) for i in reversed(range(12))]  # other order, same cases
    intervals = delta_intervals(before, after)
    delta, low, high = intervals["score"]
    assert delta == pytest.approx(0.5) and 0 < low <= delta <= high <= 1
    assert "verdict_accuracy" in intervals  # a per-example rate both sides carry
    # Paired: every case gained exactly +1 → the interval is the point; unpaired by position it would be wide.
    assert delta_intervals(before, [Scored(s.case_id, 1.0) for s in reversed(before)])["score"] == (1.0, 1.0, 1.0)


def test_interval_metrics_and_verdict_lines() -> None:
    intervals = {"dev": {"score": (0.2, 0.1, 0.3)}, "test": {"score": (0.05, -0.1, 0.2)}}
    metrics = interval_metrics(intervals)
    assert metrics["delta_dev_score"] == 0.2 and metrics["delta_dev_score_ci_low"] == 0.1
    assert metrics["delta_test_score_ci_high"] == 0.2
    assert "excludes zero" in verdict_line("dev", intervals["dev"])
    assert "includes zero" in verdict_line("test", intervals["test"])


def test_program_diff_shows_instruction_changes_and_demos_with_the_one_truncation_format() -> None:
    long = "x" * 500
    before = {"judge": PredictorView("Check each claim.\nBe strict.", ())}
    after = {"judge": PredictorView("Check each claim against its evidence.\nBe strict.",
                                    (render_demo({"query": long, "verdict": "PASS", "augmented": True}),))}
    text = render_diff(before, after)
    assert "-Check each claim." in text and "+Check each claim against its evidence." in text
    assert "**added** (1)" in text and "verdict: PASS" in text and "augmented" not in text
    line = next(row for row in text.splitlines() if row.startswith("query: "))
    kept, dropped = split_preview(line[len("query: "):])
    assert kept == "x" * 300 and dropped == 200
    assert "unchanged" in render_diff(before, before)


def test_predictor_views_render_a_real_modules_demos() -> None:
    from evigate.modules.verifier import Verifier

    module = Verifier()
    name, predictor = next(iter(module.named_predictors()))
    predictor.demos = [dspy.Example(verifier_input={"a": 1}, judgement="ok", augmented=True)]
    views = predictor_views(module)
    assert views[name].demos == ('verifier_input: {"a": 1}\njudgement: ok',)


def _children(run_id: str) -> list[Any]:
    return mlflow.search_runs(experiment_names=["evigate-verifier"], output_format="list",
                              filter_string=f"tags.mlflow.parentRunId = '{run_id}'")


def test_random_search_job_logs_intervals_diff_and_every_trial(tmp_path: Path, tracking_uri: str) -> None:
    data, lm = scripted_data("verifier", per_split=3)
    result = run_optimize(OptimizeConfig(agent="verifier", optimizer="random-search", budget=1, max_demos=1,
                                         program_dir=tmp_path / "program", tracking_uri=tracking_uri),
                          lm=lm, data=data)
    assert set(result.intervals) == {"dev", "test"} and "score" in result.intervals["dev"]
    run = mlflow.get_run(result.run_id)
    delta, low, high = result.intervals["dev"]["score"]
    assert run.data.metrics["delta_dev_score"] == pytest.approx(delta)
    assert run.data.metrics["delta_dev_score_ci_low"] == pytest.approx(low)
    assert run.data.metrics["delta_test_score_ci_high"] == pytest.approx(result.intervals["test"]["score"][2])
    logged = json.loads(Path(mlflow.artifacts.download_artifacts(run_id=result.run_id,
                                                                 artifact_path="intervals.json")).read_text())
    assert logged["dev"]["score"] == {"delta": delta, "low": low, "high": high}
    diff = Path(mlflow.artifacts.download_artifacts(run_id=result.run_id, artifact_path="program_diff.md")).read_text()
    assert diff.startswith("# Program diff") and "### Instructions" in diff
    trials = [child for child in _children(result.run_id) if "evigate.trial" in child.data.tags]
    # zero-shot, labels only, unshuffled, one shuffled candidate
    assert sorted(child.info.run_name for child in trials) == ["trial-01", "trial-02", "trial-03", "trial-04"]
    for child in trials:
        assert 0.0 <= child.data.metrics["trial_score"] <= 1.0
        assert {"trial", "instructions_sha", "demo_count", "candidate_seed"} <= set(child.data.params)
    zero_shot = next(child for child in trials if child.data.params["candidate_seed"] == "-3")
    assert zero_shot.data.params["demo_count"] == "0"


def test_bootstrap_has_one_trial_scored_by_the_jobs_dev_evaluation() -> None:
    from evigate.modules.verifier import Verifier

    program = Verifier()
    trials = trials_of("bootstrap", program, 0.75)
    assert trials == [Trial(1, 0.75, program, "dev (the job's evaluation)")]
    params = trial_params(trials[0])
    assert len(params["instructions_sha"]) == 12 and params["demo_count"] == "0"
    assert any(key.startswith("instructions_first_line.") for key in params)


def _compile(optimizer: str, lm: Any, data: Any, reflection: Any = None, budget: int = 2) -> Any:
    from evigate.modules.verifier import Verifier
    from evigate.optimize.evaluation import metric_for
    from evigate.optimize.verifier_metric import GateCache

    gates = GateCache()
    settings = OptimizerSettings(optimizer, budget=budget, max_demos=1, labeled_demos=0, threshold=0.75,
                                 num_threads=1, seed=0)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        return compile_with(settings, Verifier(), metric_for("verifier", gates=gates),
                            metric_for("verifier", feedback=True, gates=gates), data.splits["train"],
                            data.splits["dev"], reflection)


@pytest.mark.skipif(importlib.util.find_spec("optuna") is None, reason="MIPROv2 needs optuna (pip install optuna)")
def test_mipro_trials_come_from_its_trial_logs() -> None:
    from dspy.utils import DummyLM

    data, lm = scripted_data("verifier", per_split=3)
    proposer = {
        "`proposed_instruction`": {"proposed_instruction": "逐条核对每个 claim 的证据。"},
        "`observations`": {"observations": "事故诊断 claim 与工具证据。"},
        "`summary`": {"summary": "事故诊断 claim 核验数据。"},
        "`program_description`": {"program_description": "核验 claim。"},
        "`module_description`": {"module_description": "判定 claim。"},
    }
    compiled = _compile("mipro", DummyLM({**proposer, **lm.answers}, adapter=dspy.JSONAdapter()), data)
    trials = trials_of("mipro", compiled, 0.0)
    assert [trial.number for trial in trials] == sorted(compiled.trial_logs)
    assert len(trials) == 3  # the default program, then the two budgeted trials (full dev split: 3 examples)
    assert trials[0].scored_on == "dev" and trials[0].score == compiled.trial_logs[1]["full_eval_score"] / 100
    assert all(0.0 <= trial.score <= 1.0 for trial in trials)


def test_gepa_trials_come_from_its_detailed_results() -> None:
    plain, _ = scripted_data("verifier", per_split=3)
    data, lm = scripted_data("verifier", per_split=3, wrong=[e.case_id for e in plain.splits["train"]])
    compiled = _compile("gepa", lm, data, ScriptedReflectionLM(), budget=12)
    results = compiled.detailed_results  # track_stats is on, so GEPA keeps every candidate
    trials = trials_of("gepa", compiled, 0.0)
    assert len(trials) == len(results.candidates) >= 1
    assert [trial.score for trial in trials] == list(results.val_aggregate_scores)
    assert trials[0].extra["parents"] == "" and "discovered_after_metric_calls" in trials[0].extra


def test_reflection_model_goes_through_the_one_lm_builder_into_gepa(tmp_path: Path, tracking_uri: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import evigate.llm

    data, lm = scripted_data("verifier", per_split=3)
    built: dict[str, Any] = {}

    def lm_from_settings(settings: Any, agent: str, *, model: str, **engine: Any) -> Any:
        built[model] = dspy.utils.DummyLM([])
        return built[model]

    received: dict[str, Any] = {}

    class RecordingGEPA:
        def __init__(self, **kwargs: Any) -> None:
            received.update(kwargs)

        def compile(self, student: Any, **_: Any) -> Any:
            return student

    monkeypatch.setattr(evigate.llm, "lm_from_settings", lm_from_settings)
    monkeypatch.setattr(dspy, "GEPA", RecordingGEPA)
    run_optimize(OptimizeConfig(agent="verifier", optimizer="gepa", reflection_model="openai/reflector",
                                program_dir=tmp_path / "program", tracking_uri=tracking_uri), lm=lm, data=data)
    assert list(built) == ["openai/reflector"]
    assert received["reflection_lm"] is built["openai/reflector"]


def test_cli_table_has_a_ci_column_and_says_whether_each_split_excludes_zero(
        tmp_path: Path, tracking_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console
    from typer.testing import CliRunner

    from evigate.cli.app import _register_commands, app

    _register_commands()
    data, lm = scripted_data("verifier", per_split=3)
    monkeypatch.setattr("evigate.optimize.jobs.load_agent_data", lambda *args, **kwargs: data)
    monkeypatch.setattr("evigate.optimize.jobs.resolve_lm",
                        lambda agent, model, injected, threads=None: (lm, model or "dummy"))
    monkeypatch.setattr("evigate.cli.optimize.console", Console(width=200))  # no column wrapping
    result = CliRunner().invoke(app, ["optimize", "verifier", "--budget", "2", "--model", "scripted",
                                      "--program-dir", str(tmp_path / "prog")])
    assert result.exit_code == 0, result.output
    assert "95 % CI" in result.output
    score_row = next(line for line in result.output.splitlines() if " dev " in line and " score " in line)
    assert "[+0.000, +0.000]" in score_row  # scripted answers are gold before and after: no change at all
    assert "dev: score Δ +0.000, 95 % CI [+0.000, +0.000] includes zero — no measured change" in result.output
    assert "test: score Δ" in result.output


def test_mipro_minibatch_trials_and_random_search_order_read_from_dspys_shapes() -> None:
    from types import SimpleNamespace

    from evigate.modules.verifier import Verifier

    program = Verifier()
    # MIPROv2 with minibatches: a trial holds mb_* (scored on a minibatch) or full_eval_* (the whole dev split).
    logs = {2: {"mb_program": program, "mb_score": 75.0}, 1: {"full_eval_program": program, "full_eval_score": 50.0}}
    trials = trials_of("mipro", SimpleNamespace(trial_logs=logs), 0.0)
    assert [(t.number, t.score, t.scored_on) for t in trials] == [(1, 0.5, "dev"), (2, 0.75, "dev minibatch")]
    # Random search sorts its candidates by score; trials are numbered in the order DSPy built them (by seed).
    candidates = [{"score": 90.0, "seed": 0, "program": program}, {"score": 10.0, "seed": -3, "program": program}]
    trials = trials_of("random-search", SimpleNamespace(candidate_programs=candidates), 0.0)
    assert [(t.number, t.score, t.extra["candidate_seed"]) for t in trials] == [(1, 0.1, "-3"), (2, 0.9, "0")]
