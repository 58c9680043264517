"""DummyLM-driven optimization and evaluation, tracked in a temporary MLflow SQLite store."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import dspy
import mlflow
import pytest

from evigate.optimize.data import balanced_head, load_saved_module
from evigate.optimize.eval_jobs import run_eval
from evigate.optimize.jobs import OptimizeConfig, run_optimize, summary_rows
from evigate.optimize.optimizers import OptimizerSettings, compile_with
from tests.optimize.conftest import scripted_data


def _artifacts(client: mlflow.MlflowClient, run_id: str, path: str | None = None) -> list[str]:
    found = []
    for item in client.list_artifacts(run_id, path):
        found.extend(_artifacts(client, run_id, item.path) if item.is_dir else [item.path])
    return found


def test_bootstrap_optimization_logs_a_complete_mlflow_run(tmp_path: Path, tracking_uri: str) -> None:
    # One dev case gets a gullible answer (everything direct, PASS) so the scores are not all perfect.
    data, lm = scripted_data("verifier", per_split=4)
    wrong_case = data.splits["dev"][0].case_id
    data, lm = scripted_data("verifier", per_split=4, wrong=[wrong_case])
    ticks: list[str] = []

    def progress(description: str, total: int | None):
        return lambda: ticks.append(description)

    config = OptimizeConfig(agent="verifier", optimizer="bootstrap", budget=3, program_dir=tmp_path / "program",
                            tracking_uri=tracking_uri)
    result = run_optimize(config, lm=lm, data=data, progress=progress)

    assert result.program_path == tmp_path / "program" / "verifier.json" and result.program_path.is_file()
    assert ticks.count("baseline verifier on dev") == 4 and ticks.count("optimized verifier on test") == 4
    assert any(tick.startswith("compile (bootstrap") for tick in ticks)
    dev = result.baseline["dev"].summary
    assert dev.count == 4 and dev.mean_score < 1.0 and result.baseline["test"].summary.mean_score == 1.0
    wrong_score = next(score for score in result.baseline["dev"].scores if score.case_id == wrong_case)
    assert wrong_score.claim_accuracy < 1.0 and wrong_score.score < 1.0
    rows = summary_rows(result)
    assert {(split, metric) for split, metric, _, _ in rows} >= {("dev", "score"), ("test", "claim_macro_f1")}

    runs = mlflow.search_runs(experiment_names=["evigate-verifier"], output_format="list",
                              filter_string="tags.mlflow.runName = 'optimize-verifier-bootstrap'")
    assert [run.info.run_id for run in runs] == [result.run_id]
    run = runs[0]
    metrics = run.data.metrics
    assert metrics["baseline_dev_score"] == pytest.approx(dev.mean_score)
    assert {"optimized_dev_score", "optimized_test_verdict_accuracy", "baseline_test_claim_macro_f1",
            "delta_dev_score", "compile_seconds"} <= set(metrics)
    assert run.data.params["optimizer"] == "bootstrap" and run.data.params["budget"] == "3"
    assert run.data.params["dev_digest"] == data.digests["dev"]
    contexts = {tag.value for dataset in run.inputs.dataset_inputs for tag in dataset.tags
                if tag.key == "mlflow.data.context"}
    assert contexts == {"train", "dev", "test"}
    artifacts = _artifacts(mlflow.MlflowClient(), run.info.run_id)
    assert {"program/verifier.json", "per_claim_results.json", "confusion/verdict_optimized_test.png",
            "best_model.json"} <= set(artifacts)
    table = json.loads(Path(mlflow.artifacts.download_artifacts(run_id=run.info.run_id,
                                                                 artifact_path="per_claim_results.json")).read_text())
    assert {"case_id", "claim_id", "gold", "predicted", "code_verdict"} <= set(table["columns"])
    children = mlflow.search_runs(experiment_names=["evigate-verifier"], output_format="list",
                                  filter_string=f"tags.mlflow.parentRunId = '{run.info.run_id}'")
    assert {child.info.run_name for child in children} >= {"baseline-dev", "baseline-test", "optimized-dev",
                                                           "optimized-test"}


def test_saved_program_loads_and_runs(tmp_path: Path, tracking_uri: str, world_db: Path) -> None:
    data, lm = scripted_data("verifier", per_split=3)
    config = OptimizeConfig(agent="verifier", optimizer="bootstrap", budget=2, program_dir=tmp_path / "program",
                            tracking_uri=tracking_uri)
    run_optimize(config, lm=lm, data=data)
    module, state = load_saved_module("verifier", tmp_path / "program")
    assert state == tmp_path / "program" / "verifier.json"
    demos = module.judge.demos
    assert demos and set(demos[0].keys()) <= {"verifier_input", "judgement", "augmented"}

    import dspy

    from evigate import load_program

    program = load_program(tmp_path / "program", database=world_db)
    assert len(program.verifier.judge.demos) == len(demos)
    example = data.splits["test"][0]
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        prediction = program.verifier(verifier_input=example.verifier_input)
    assert prediction.verifier_output.claim_checks


def test_composer_optimization_and_evaluations(tmp_path: Path, tracking_uri: str) -> None:
    data, lm = scripted_data("composer", per_split=3)
    config = OptimizeConfig(agent="composer", optimizer="bootstrap", budget=2, program_dir=tmp_path / "program",
                            tracking_uri=tracking_uri)
    result = run_optimize(config, lm=lm, data=data)
    assert result.baseline["dev"].summary.count == 3
    assert result.baseline["dev"].summary.clean_rate == 1.0  # answers built from the input's own sentences
    assert (tmp_path / "program" / "composer.json").is_file()
    run = mlflow.get_run(result.run_id)
    assert "baseline_test_clean_rate" in run.data.metrics


def test_eval_jobs_log_runs_for_each_agent(tmp_path: Path, tracking_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    verifier_data, verifier_lm = scripted_data("verifier", per_split=3)
    monkeypatch.setattr("evigate.optimize.eval_jobs.load_agent_data",
                        lambda agent, sets, limit, splits, **_: verifier_data)
    result = run_eval("verifier", "dev", lm=verifier_lm, program_dir=tmp_path / "none", tracking_uri=tracking_uri)
    assert result.metrics["score"] == 1.0 and result.metrics["examples"] == 3
    assert result.state_file is None  # nothing saved there: built-in prompts
    program = run_eval("program", "dev", lm=verifier_lm, program_dir=tmp_path / "none", tracking_uri=tracking_uri)
    assert program.metrics["verifier_verdict_accuracy"] == 1.0
    called = [row for row in program.program_rows if row["composer_called"]]
    assert len(called) == program.metrics["composer_calls"] == sum(
        1 for example in verifier_data.splits["dev"] if example.gold_verdict != "REJECT")
    assert mlflow.search_runs(experiment_names=["evigate-program"], output_format="list")


def test_random_search_compiles_with_a_budget_of_candidates() -> None:
    import dspy

    from evigate.optimize.evaluation import metric_for
    from evigate.optimize.verifier_metric import GateCache

    data, lm = scripted_data("verifier", per_split=3)
    gates = GateCache()
    settings = OptimizerSettings("random-search", budget=1, max_demos=1, labeled_demos=0, threshold=0.75,
                                 num_threads=1, seed=0)
    from evigate.modules.verifier import Verifier

    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        compiled = compile_with(settings, Verifier(), metric_for("verifier", gates=gates),
                                metric_for("verifier", feedback=True, gates=gates), data.splits["train"],
                                data.splits["dev"])
    assert len(compiled.candidate_programs) == 4  # zero-shot, labels-only, unshuffled, 1 random candidate


def test_balanced_head_keeps_every_verdict() -> None:
    items = [("PASS", i) for i in range(5)] + [("REJECT", i) for i in range(5)] + [("LOW_CONFID", 0)]
    head = balanced_head(items, key=lambda item: item[0], limit=4)
    assert {verdict for verdict, _ in head} == {"PASS", "REJECT", "LOW_CONFID"} and len(head) == 4
    assert balanced_head(items, key=lambda item: item[0], limit=None) == items


def test_bad_optimizer_settings_fail_clearly() -> None:
    from evigate.optimize.jobs import optimizer_settings

    with pytest.raises(ValueError, match="unknown optimizer"):
        optimizer_settings(OptimizeConfig(agent="verifier", optimizer="annealing"))
    settings = OptimizerSettings("bootstrap", budget=0, max_demos=1, labeled_demos=0, threshold=0.5, num_threads=1,
                                 seed=0)
    with pytest.raises(ValueError, match="at least 1"):
        compile_with(settings, None, None, None, [object()], [])  # type: ignore[arg-type]


class ScriptedReflectionLM(dspy.BaseLM):
    """GEPA's reflection LM: records what it was shown, proposes a fixed instruction (JSON, like JSONAdapter wants)."""

    def __init__(self) -> None:
        super().__init__(model="scripted-reflection")
        self.prompts: list[str] = []

    def forward(self, prompt: str | None = None, messages: list[dict] | None = None, **kwargs: object) -> object:
        self.prompts.append(prompt or "\n".join(str(message.get("content", "")) for message in messages or []))
        text = '{"new_instruction": "逐条核对 claim 与证据；证据没有直接显示的结论不能判 direct_observation。"}'
        message = SimpleNamespace(content=text, role="assistant")
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop", index=0)], usage={},
                               model=self.model)


def test_gepa_reflects_on_per_claim_feedback() -> None:
    from evigate.modules.verifier import Verifier
    from evigate.optimize.evaluation import metric_for
    from evigate.optimize.verifier_metric import GateCache

    plain, _ = scripted_data("verifier", per_split=3)
    data, lm = scripted_data("verifier", per_split=3, wrong=[e.case_id for e in plain.splits["train"]])
    gates, reflection = GateCache(), ScriptedReflectionLM()
    settings = OptimizerSettings("gepa", budget=12, max_demos=0, labeled_demos=0, threshold=0.75, num_threads=1,
                                 seed=0)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        compile_with(settings, Verifier(), metric_for("verifier", gates=gates),
                     metric_for("verifier", feedback=True, gates=gates), data.splits["train"], data.splits["dev"],
                     reflection)
    assert reflection.prompts, "GEPA never asked the reflection LM: the feedback metric gave it nothing to fix"
    shown = "\n".join(reflection.prompts)
    assert "you said direct_observation; correct is" in shown


def test_local_models_get_a_bounded_default_eval_limit() -> None:
    from evigate.optimize.data import LOCAL_EVAL_LIMIT, default_eval_limit

    assert default_eval_limit(None, "local/qwen2.5-coder-0.5b") == LOCAL_EVAL_LIMIT
    assert default_eval_limit(None, "openai/gpt-4o-mini") is None
    assert default_eval_limit(0, "local/qwen2.5-coder-0.5b") is None  # 0 = everything
    assert default_eval_limit(5, "openai/gpt-4o-mini") == 5


@pytest.mark.skipif(importlib.util.find_spec("optuna") is None, reason="MIPROv2 needs optuna (pip install optuna)")
def test_mipro_compiles_with_scripted_instruction_proposals() -> None:
    from dspy.utils import DummyLM

    from evigate.modules.verifier import Verifier
    from evigate.optimize.evaluation import metric_for
    from evigate.optimize.verifier_metric import GateCache

    data, lm = scripted_data("verifier", per_split=3)
    proposer = {  # MIPRO's own prompts: dataset summary, program description, instruction proposals
        "`proposed_instruction`": {"proposed_instruction": "逐条核对每个 claim 的证据。"},
        "`observations`": {"observations": "事故诊断 claim 与工具证据。"},
        "`summary`": {"summary": "事故诊断 claim 核验数据。"},
        "`program_description`": {"program_description": "核验 claim。"},
        "`module_description`": {"module_description": "判定 claim。"},
    }
    lm = DummyLM({**proposer, **lm.answers}, adapter=dspy.JSONAdapter())
    gates = GateCache()
    settings = OptimizerSettings("mipro", budget=2, max_demos=1, labeled_demos=0, threshold=0.75, num_threads=1,
                                 seed=0)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        compiled = compile_with(settings, Verifier(), metric_for("verifier", gates=gates),
                                metric_for("verifier", feedback=True, gates=gates), data.splits["train"],
                                data.splits["dev"])
    assert compiled.judge.signature.instructions
