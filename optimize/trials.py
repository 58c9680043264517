"""Every program an optimizer tried, read from DSPy's own records after compile, and logged as MLflow child runs.

One mechanism for all four optimizers: :func:`trials_of` turns what the optimizer left on the compiled program
into a list of :class:`Trial` records, :func:`log_trials` logs each as a nested run of the job's run (tag
``evigate.trial``), so MLflow's compare view shows the trials side by side. Where each optimizer keeps them
(DSPy 3.4, read from its source):

* random-search: ``compiled.candidate_programs`` — dicts with ``score`` (percent of the dev split), ``seed``
  (−3 zero-shot, −2 labels only, −1 unshuffled, 0… shuffled) and ``program``;
* mipro: ``compiled.trial_logs`` — trial number → ``mb_score``/``mb_program`` (minibatch) and/or
  ``full_eval_score``/``full_eval_program`` (whole dev split), scores in percent;
* gepa: ``compiled.detailed_results`` (``track_stats=True``) — ``candidates``, ``val_aggregate_scores`` (0..1),
  ``parents``, ``discovery_eval_counts``;
* bootstrap: scores nothing while compiling; its one trial is the compiled program with the job's dev score.
Scores are normalised to 0..1, the scale of the job's own metrics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.signatures.preview import truncate

FIRST_LINE_CHARS = 200
"""Characters of an instruction's first line kept in a trial's params (the one truncation format cuts it)."""


@dataclass(frozen=True)
class Trial:
    """One program an optimizer scored."""

    number: int
    score: float
    program: Any
    scored_on: str
    """What the score was measured on, e.g. ``dev`` or ``dev minibatch``."""
    extra: dict[str, str] = field(default_factory=dict)


def trials_of(optimizer: str, compiled: Any, compiled_dev_score: float) -> list[Trial]:
    """The trials ``optimizer`` left on ``compiled``; the compiled program alone when it kept none."""
    trials: list[Trial] = []
    if optimizer == "random-search":
        trials = _random_search(getattr(compiled, "candidate_programs", None) or [])
    elif optimizer == "mipro":
        trials = _mipro(getattr(compiled, "trial_logs", None) or {})
    elif optimizer == "gepa" and getattr(compiled, "detailed_results", None) is not None:
        trials = _gepa(compiled.detailed_results)
    return trials or [Trial(1, compiled_dev_score, compiled, "dev (the job's evaluation)")]


def _random_search(candidates: Sequence[dict[str, Any]]) -> list[Trial]:
    ordered = sorted(candidates, key=lambda candidate: candidate.get("seed", 0))  # DSPy sorts them by score
    return [Trial(index, candidate["score"] / 100, candidate["program"], "dev",
                  {"candidate_seed": str(candidate.get("seed", ""))})
            for index, candidate in enumerate(ordered, start=1)]


def _mipro(trial_logs: dict[int, dict[str, Any]]) -> list[Trial]:
    trials = []
    for number in sorted(trial_logs):
        log = trial_logs[number]
        if "full_eval_program" in log:
            trials.append(Trial(number, log["full_eval_score"] / 100, log["full_eval_program"], "dev"))
        elif "mb_program" in log:
            trials.append(Trial(number, log["mb_score"] / 100, log["mb_program"], "dev minibatch"))
    return trials


def _gepa(results: Any) -> list[Trial]:
    return [
        Trial(index + 1, float(score), program, "dev",
              {"parents": ",".join(str(parent) for parent in results.parents[index] if parent is not None),
               "discovered_after_metric_calls": str(results.discovery_eval_counts[index])})
        for index, (program, score) in enumerate(zip(results.candidates, results.val_aggregate_scores, strict=True))
    ]


def trial_params(trial: Trial) -> dict[str, str]:
    """Params that tell trials apart in the compare view: instructions digest and first lines, demo count."""
    predictors = list(trial.program.named_predictors())
    instructions = "\n".join(f"{name}\n{predictor.signature.instructions}" for name, predictor in predictors)
    params = {"trial": str(trial.number), "scored_on": trial.scored_on,
              "instructions_sha": hashlib.sha256(instructions.encode()).hexdigest()[:12],
              "demo_count": str(sum(len(predictor.demos) for _, predictor in predictors)), **trial.extra}
    for name, predictor in predictors:
        first = (predictor.signature.instructions.strip().splitlines() or [""])[0]
        params[f"instructions_first_line.{name}"] = truncate(first, FIRST_LINE_CHARS)
    return params


def trial_run_name(trial: Trial) -> str:
    return f"trial-{trial.number:02d}"


def log_trials(trials: Sequence[Trial], optimizer: str) -> list[str]:
    """Log each trial as a nested run of the active run (metric ``trial_score``); returns their run ids."""
    import mlflow

    from evigate.optimize.tracking import child_run

    run_ids = []
    for trial in trials:
        with child_run(trial_run_name(trial)) as run:
            mlflow.set_tags({"evigate.trial": str(trial.number), "evigate.optimizer": optimizer})
            mlflow.log_params(trial_params(trial))
            mlflow.log_metric("trial_score", trial.score)
            run_ids.append(run.info.run_id)
    return run_ids
