"""``evigate optimize program``: every agent's stage job under one MLflow run; only measured gains are compiled.

For each chosen agent the stage job (:func:`evigate.optimize.jobs.run_optimize`, the one path every agent and
optimizer goes through) runs as a nested child of the program's run, saving into a staging directory. An agent is
kept only when its test-split score interval (``OptimizeResult.intervals["test"]["score"]``, a paired bootstrap on
examples no optimizer saw) excludes zero *and* the delta is positive; the kept agents' files and a manifest (model,
run id, the command, per-agent delta and interval, digests) are written to the program directory, replacing any
agent file a previous job left there: the directory is one program. ``end_to_end`` then asks the first N questions
of the question bank's test split with and without the compiled program in the same run
(:mod:`evigate.optimize.question_runs`) and logs both to the parent run.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evigate.errors import EvigateError
from evigate.modules.saved_state import write_program_manifest
from evigate.optimize import tracking
from evigate.optimize.data import resolve_program_dir
from evigate.optimize.jobs import OptimizeConfig, OptimizeResult, StartTask, no_progress, run_optimize
from evigate.optimize.question_runs import Comparison
from evigate.optimize.stats import excludes_zero
from evigate.settings import AGENTS, load_settings

PROGRAM_AGENTS: tuple[str, ...] = AGENTS
"""Every agent, in pipeline order; an agent whose stage job cannot run yet (no data) is reported, not compiled."""

AgentJob = Callable[[OptimizeConfig], OptimizeResult]


@dataclass
class AgentOutcome:
    """One agent's stage job as the program job saw it."""

    agent: str
    kept: bool
    reason: str
    interval: tuple[float, float, float] | None = None
    run_id: str | None = None

    def figures(self) -> dict[str, Any]:
        figures: dict[str, Any] = {"kept": self.kept, "reason": self.reason, "run_id": self.run_id}
        if self.interval is not None:
            figures.update(zip(("test_delta", "test_low", "test_high"), self.interval, strict=True))
        return figures


@dataclass
class ProgramResult:
    """What ``evigate optimize program`` produced and where it went."""

    run_id: str
    tracking_uri: str
    program_dir: Path
    model: str
    outcomes: list[AgentOutcome] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    end_to_end: Comparison | None = None
    seconds: float = 0.0


def judge(agent: str, result: OptimizeResult) -> AgentOutcome:
    """Keep ``agent`` only when its test score interval excludes zero and the delta is a gain."""
    intervals: dict[str, dict[str, tuple[float, float, float]]] = getattr(result, "intervals", None) or {}
    interval = intervals.get("test", {}).get("score")
    if interval is None:
        return AgentOutcome(agent, False, "the job reported no test interval", None, result.run_id)
    if not excludes_zero(interval):
        return AgentOutcome(agent, False, "the test interval includes zero: no change shown", interval, result.run_id)
    if interval[0] <= 0:
        return AgentOutcome(agent, False, "the test interval lies below zero: a loss", interval, result.run_id)
    return AgentOutcome(agent, True, "the test interval lies above zero: a gain", interval, result.run_id)


def run_program(config: OptimizeConfig, agents: Sequence[str] = PROGRAM_AGENTS, *, end_to_end: int = 0,
                command: str = "", job: AgentJob | None = None, progress: StartTask = no_progress,
                compare: Callable[[Path, str, int], Comparison] | None = None) -> ProgramResult:
    """Run each agent's stage job as a child run, compile the ones that gained, optionally compare end to end.

    ``job`` (default: ``run_optimize``) and ``compare`` (default: :func:`compare_end_to_end`) may be injected.
    """
    import mlflow

    unknown = [agent for agent in agents if agent not in PROGRAM_AGENTS]
    if unknown or not agents:
        raise ValueError(f"unknown agent(s) {', '.join(unknown) or '(none)'}; known: {', '.join(PROGRAM_AGENTS)}")
    started = time.perf_counter()
    job = job or (lambda stage: run_optimize(stage, progress=progress))
    model = config.model or load_settings().models.default
    target = resolve_program_dir(config.program_dir)
    uri = tracking.configure(config.tracking_uri)
    tracking.ensure_experiment("program", uri)
    with tempfile.TemporaryDirectory(prefix="evigate-program-") as staging, mlflow.start_run(
        run_name=f"optimize-program-{config.optimizer}"
    ) as run:
        mlflow.log_params({"agents": ",".join(agents), "model": model, "optimizer": config.optimizer,
                           "program_dir": str(target), "command": command[:500], "end_to_end": end_to_end})
        mlflow.set_tags({"evigate.job": "optimize-program", "evigate.optimizer": config.optimizer})
        result = ProgramResult(run.info.run_id, uri, target, model)
        for agent in agents:
            stage = replace(config, agent=agent, model=model, program_dir=Path(staging) / agent, tracking_uri=uri)
            result.outcomes.append(_stage(agent, stage, job))
        result.manifest = _write_program(result, Path(staging), command, config)
        mlflow.log_metrics(_outcome_metrics(result.outcomes))
        mlflow.log_dict(result.manifest, "program/manifest.json")
        if end_to_end:
            result.end_to_end = (compare or compare_end_to_end)(target, model, end_to_end)
            mlflow.log_metrics(result.end_to_end.metrics())
    result.seconds = time.perf_counter() - started
    return result


def _stage(agent: str, stage: OptimizeConfig, job: AgentJob) -> AgentOutcome:
    """One agent's job; one that cannot run (no stage data yet, a bad file) is an outcome, not the end of the job."""
    try:
        return judge(agent, job(stage))
    except (EvigateError, ValueError) as exc:
        return AgentOutcome(agent, False, f"not run: {exc}")


def _write_program(result: ProgramResult, staging: Path, command: str, config: OptimizeConfig) -> dict[str, Any]:
    """Copy the kept agents' files into the program directory (dropping stale ones) and write its manifest."""
    target = result.program_dir
    target.mkdir(parents=True, exist_ok=True)
    kept = [outcome.agent for outcome in result.outcomes if outcome.kept]
    for stale in AGENTS:
        (target / f"{stale}.json").unlink(missing_ok=True)
    for agent in kept:
        shutil.copyfile(staging / agent / f"{agent}.json", target / f"{agent}.json")
    return write_program_manifest(
        target, kept, model=result.model, mlflow_run_id=result.run_id, command=command,
        executor_mode=load_settings().executor.mode, optimizer=config.optimizer,
        figures={outcome.agent: outcome.figures() for outcome in result.outcomes},
    )


def _outcome_metrics(outcomes: Sequence[AgentOutcome]) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for outcome in outcomes:
        metrics[f"{outcome.agent}_kept"] = float(outcome.kept)
        if outcome.interval is not None:
            delta, low, high = outcome.interval
            metrics |= {f"{outcome.agent}_test_delta": delta, f"{outcome.agent}_test_low": low,
                        f"{outcome.agent}_test_high": high}
    return metrics


def compare_end_to_end(program_dir: Path, model: str, limit: int) -> Comparison:
    """The first ``limit`` test questions of the bank, asked with the compiled program in ``program_dir`` and with
    the built-in prompts (same model, fresh audit stores), alternating which goes first."""
    from evigate.datasets.questions import load_questions
    from evigate.demo.catalog import INCIDENTS
    from evigate.modules.program import DiagnosisProgram
    from evigate.optimize.question_runs import compare_programs

    workdir = Path(tempfile.mkdtemp(prefix="evigate-program-e2e-"))
    models = {"default": model}
    compiled = DiagnosisProgram.from_settings(database=workdir / "compiled.duckdb", program_dir=str(program_dir),
                                              models=models)
    builtin = builtin_program(database=workdir / "builtin.duckdb", models=models)
    return compare_programs(compiled, builtin, load_questions(split="test")[:limit], INCIDENTS)


def builtin_program(settings_file: str | Path | None = None, **kwargs: Any) -> Any:
    """A program on the built-in prompts, the baseline of a comparison; a configured program_dir (which would win
    over ``compiled_program=False``) is a clear error rather than a comparison of a program with itself."""
    from evigate.errors import ConfigError
    from evigate.modules.program import DiagnosisProgram

    program = DiagnosisProgram.from_settings(settings_file, **{**kwargs, "compiled_program": False})
    if program.program_choice.source != "built-in":
        raise ConfigError(f"program_dir is configured ({program.program_choice.directory}): the built-in side of the "
                          f"comparison would load it too; unset program_dir / EVIGATE_PROGRAM_DIR to compare")
    return program
