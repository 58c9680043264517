"""``evigate optimize``: baseline → compile → optimized, on fixed splits, tracked as one MLflow run.

The run (experiment ``evigate-<agent>``) holds: params (agent, model, optimizer settings, split sizes), the three
splits as dataset inputs with digests, baseline and optimized metrics on dev and test (each evaluation also as a
nested run with DSPy's autologged results), the compile's autologged params/best program, the saved program file,
a per-claim (per-case for the Composer) results table and, for the Verifier, verdict confusion-matrix PNGs.
It also holds the paired bootstrap 95 % interval of each delta (optimized − baseline, pairing each example with
itself by ``case_id``; metrics ``delta_<split>_<metric>`` with ``_ci_low``/``_ci_high`` and ``intervals.json``):
an interval that excludes zero is a measured change on that split, one that includes zero is not distinguishable
from noise on these examples. ``program_diff.md`` shows what compiling changed in the instructions and demos, and
every program the optimizer tried is a child run tagged ``evigate.trial`` (metric ``trial_score``).
The compiled module is saved as ``<program_dir>/<agent>.json``, where :func:`evigate.load_program` finds it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from evigate.llm.adapter import adapter_for
from evigate.modules.saved_state import record_state_file
from evigate.optimize import tracking
from evigate.optimize.data import (
    AgentData,
    default_eval_limit,
    load_agent_data,
    new_module,
    resolve_lm,
    resolve_program_dir,
)
from evigate.optimize.evaluation import (
    EvalResult,
    TickingMetric,
    evaluate_agent,
    metric_for,
    per_claim_rows,
    summary_keys,
)
from evigate.optimize.intervals import Interval, interval_metrics, split_intervals
from evigate.optimize.optimizers import DEFAULT_BUDGETS, OPTIMIZERS, OptimizerSettings, compile_with
from evigate.optimize.program_diff import PredictorView, predictor_views, render_diff
from evigate.optimize.trials import log_trials, trials_of
from evigate.optimize.verifier_metric import VERDICTS, GateCache, VerifierSummary

StartTask = Callable[[str, int | None], Callable[[], None]]
"""Progress hook: ``start(description, total)`` returns a function to call once per finished unit."""


def no_progress(_description: str, _total: int | None) -> Callable[[], None]:
    """The progress hook of a caller that shows none (``evigate optimize`` and ``evigate eval`` alike)."""
    return lambda: None


@dataclass
class OptimizeConfig:
    """Everything ``evigate optimize`` takes; defaults are the CLI's."""

    agent: str
    optimizer: str = "bootstrap"
    budget: int | None = None
    model: str | None = None
    program_dir: str | Path | None = None
    sets: tuple[str, ...] = ("demo_world", "holmesgpt")
    max_demos: int = 2
    labeled_demos: int = 0
    eval_limit: int | None = None
    num_threads: int = 1
    seed: int = 0
    threshold: float | None = None
    tracking_uri: str | None = None
    reflection_model: str | None = None
    llm_threads: int | None = None
    data_path: str | Path | None = None
    """A team's own fixtures (``--data``) instead of the shipped sets."""


@dataclass
class OptimizeResult:
    """What one optimization produced and where it went."""

    run_id: str
    experiment_id: str
    tracking_uri: str
    program_path: Path
    baseline: dict[str, EvalResult] = field(default_factory=dict)
    optimized: dict[str, EvalResult] = field(default_factory=dict)
    compile_seconds: float = 0.0
    seconds: float = 0.0
    intervals: dict[str, dict[str, Interval]] = field(default_factory=dict)
    """Split ("dev"/"test") → metric ("score", …) → (delta, low, high): paired bootstrap 95 % interval."""


def optimizer_settings(config: OptimizeConfig) -> OptimizerSettings:
    if config.optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {config.optimizer!r}; known: {', '.join(OPTIMIZERS)}")
    threshold = config.threshold if config.threshold is not None else (0.75 if config.agent == "verifier" else 0.9)
    return OptimizerSettings(
        name=config.optimizer, budget=config.budget or DEFAULT_BUDGETS[config.optimizer],
        max_demos=config.max_demos, labeled_demos=config.labeled_demos, threshold=threshold,
        num_threads=config.num_threads, seed=config.seed,
    )


def run_optimize(config: OptimizeConfig, *, student: dspy.Module | None = None, lm: Any = None,
                 reflection_lm: Any = None, data: AgentData | None = None,
                 progress: StartTask = no_progress) -> OptimizeResult:
    """Evaluate the baseline, compile, evaluate the result, save it and log everything to MLflow.

    ``student``, ``lm``, ``reflection_lm`` and ``data`` may be injected (tests, notebooks); by default they are the
    built-in module, ``make_lm(--model)`` and the fixture splits.
    """
    import mlflow

    started = time.perf_counter()
    settings = optimizer_settings(config)
    if data is None and config.data_path is not None:  # a team's file is checked before any model is loaded
        load_agent_data(config.agent, (), None, data_path=config.data_path)
    lm, model_name = resolve_lm(config.agent, config.model, lm, config.llm_threads)
    eval_limit = default_eval_limit(config.eval_limit, model_name, config.agent)
    data = data if data is not None else load_agent_data(config.agent, config.sets, eval_limit,
                                                             data_path=config.data_path)
    if config.optimizer == "gepa" and reflection_lm is None and config.reflection_model:
        reflection_lm, _ = resolve_lm(config.agent, config.reflection_model, None, config.llm_threads)
    program_path = resolve_program_dir(config.program_dir) / f"{config.agent}.json"
    student = student if student is not None else new_module(config.agent)
    uri = tracking.configure(config.tracking_uri)
    parent = mlflow.active_run()  # `evigate optimize program`: each agent's job is a child of the program's run
    experiment_id = parent.info.experiment_id if parent else tracking.ensure_experiment(config.agent, uri)
    gates = GateCache() if config.agent == "verifier" else None
    tracking.enable_autolog()
    try:
        with dspy.context(lm=lm, adapter=adapter_for(lm)), mlflow.start_run(
            run_name=f"optimize-{config.agent}-{config.optimizer}", nested=parent is not None
        ) as run:
            _log_setup(config, settings, model_name, data, program_path, eval_limit)
            result = OptimizeResult(run.info.run_id, experiment_id, uri, program_path)
            for split in ("dev", "test"):
                result.baseline[split] = _evaluate(config, student, data, split, "baseline", gates, progress)
            metric = metric_for(config.agent, gates=gates)
            feedback_metric = metric_for(config.agent, feedback=True, gates=gates)
            total = settings.budget if settings.name == "bootstrap" else None
            tick = progress(f"compile ({settings.name}, budget {settings.budget})", total)
            student_views = predictor_views(student)  # before compile: an optimizer may share the student's state
            compile_started = time.perf_counter()
            compiled = compile_with(
                settings, student, TickingMetric(metric, tick), TickingMetric(feedback_metric, tick),
                data.splits["train"], data.splits["dev"], reflection_lm,
            )
            result.compile_seconds = time.perf_counter() - compile_started
            keep_signature_fields(compiled)
            for split in ("dev", "test"):
                result.optimized[split] = _evaluate(config, compiled, data, split, "optimized", gates, progress)
            program_path.parent.mkdir(parents=True, exist_ok=True)
            compiled.save(str(program_path))
            record_state_file(program_path)  # load_program loads only files whose digest the manifest holds
            result.intervals = split_intervals(result.baseline, result.optimized, seed=config.seed)
            _log_results(config, result, data, program_path)
            _log_program_changes(config, compiled, student_views, result)
    finally:
        tracking.disable_autolog()
    result.seconds = time.perf_counter() - started
    return result


def keep_signature_fields(module: dspy.Module) -> None:
    """Strip demo keys the predictor's signature does not name (e.g. a labelled example's ``case``).

    Labelled demos are whole training examples; saving them would copy fixture internals (tool outputs, gold
    notes) into the program file, and the prompt never shows them anyway.
    """
    for _, predictor in module.named_predictors():
        names = set(predictor.signature.fields) | {"augmented"}
        predictor.demos = [
            dspy.Example(**{key: value for key, value in demo.items() if key in names}) for demo in predictor.demos
        ]


def _evaluate(config: OptimizeConfig, module: dspy.Module, data: AgentData, split: str, stage: str,
              gates: GateCache | None, progress: StartTask) -> EvalResult:
    examples = data.splits[split]
    tick = progress(f"{stage} {config.agent} on {split}", len(examples))
    with tracking.child_run(f"{stage}-{split}"):
        result = evaluate_agent(config.agent, module, examples, label=split, num_threads=config.num_threads,
                                tick=tick, gates=gates)
        import mlflow

        mlflow.log_metrics(result.metrics())
    return result


def _log_setup(config: OptimizeConfig, settings: OptimizerSettings, model_name: str, data: AgentData,
               program_path: Path, eval_limit: int | None) -> None:
    import mlflow

    import evigate

    params: dict[str, Any] = {
        "agent": config.agent, "model": model_name, "evigate_version": evigate.__version__,
        "dspy_version": dspy.__version__, "program_path": str(program_path), "eval_limit": eval_limit or 0,
        **settings.params(),
    }
    if config.data_path is not None:
        params["data"] = str(config.data_path)
    elif config.agent == "verifier":
        params["verifier_sets"] = ",".join(config.sets)
    for split, examples in data.splits.items():
        params[f"{split}_examples"] = len(examples)
        params[f"{split}_digest"] = data.digests[split]
    mlflow.log_params(params)
    mlflow.set_tags({"evigate.agent": config.agent, "evigate.job": "optimize", "evigate.optimizer": config.optimizer})
    for split in ("train", "dev", "test"):
        tracking.log_dataset(data.rows[split], f"{config.agent}-{split}", split, data.digests[split])


def _log_results(config: OptimizeConfig, result: OptimizeResult, data: AgentData, program_path: Path) -> None:
    import mlflow

    metrics: dict[str, float] = {"compile_seconds": result.compile_seconds}
    for stage, results in (("baseline", result.baseline), ("optimized", result.optimized)):
        for split, evaluation in results.items():
            metrics.update(evaluation.metrics(f"{stage}_{split}_"))
    metrics.update(interval_metrics(result.intervals))
    mlflow.log_metrics(metrics)
    mlflow.log_dict({split: {metric: dict(zip(("delta", "low", "high"), interval, strict=True))
                             for metric, interval in by_metric.items()}
                     for split, by_metric in result.intervals.items()}, "intervals.json")
    mlflow.log_artifact(str(program_path), artifact_path="program")
    rows: list[dict[str, Any]] = []
    for stage, results in (("baseline", result.baseline), ("optimized", result.optimized)):
        for evaluation in results.values():
            rows.extend(per_claim_rows(evaluation, data.cases, stage))
    table = "per_claim_results.json" if config.agent == "verifier" else "per_case_results.json"
    tracking.log_table(rows, table)
    if config.agent == "verifier":
        log_confusions({f"{stage}_{split}": ev for stage, results in (("baseline", result.baseline),
                        ("optimized", result.optimized)) for split, ev in results.items()})


def _log_program_changes(config: OptimizeConfig, compiled: dspy.Module, student_views: dict[str, PredictorView],
                         result: OptimizeResult) -> None:
    """The instructions/demos diff as ``program_diff.md`` and every trial as a child run."""
    import mlflow

    mlflow.log_text(render_diff(student_views, predictor_views(compiled)), "program_diff.md")
    log_trials(trials_of(config.optimizer, compiled, result.optimized["dev"].summary.mean_score), config.optimizer)


def log_confusions(results: dict[str, EvalResult]) -> None:
    """One verdict confusion-matrix PNG per evaluation (gold verdict × code verdict)."""
    for name, evaluation in results.items():
        summary = evaluation.summary
        if isinstance(summary, VerifierSummary):
            tracking.log_confusion_matrix(
                summary.verdict_confusion, VERDICTS,
                f"{name}: verdict accuracy {summary.verdict_accuracy:.2f}", f"confusion/verdict_{name}.png",
            )


def summary_rows(result: OptimizeResult) -> Sequence[tuple[str, str, float, float]]:
    """(split, metric, baseline, optimized) rows for the printed table."""
    rows = []
    for split in ("dev", "test"):
        before, after = result.baseline[split].metrics(), result.optimized[split].metrics()
        keys = summary_keys(before)
        rows.extend((split, key, before[key], after[key]) for key in keys)
    return rows
