"""The four DSPy optimizers behind ``evigate optimize --optimizer``, each bounded by one ``--budget`` number.

``--budget`` means, per optimizer (the knob that dominates its cost):

* ``bootstrap`` (BootstrapFewShot): training examples the teacher runs on to collect demos;
* ``random-search`` (BootstrapFewShotWithRandomSearch): candidate demo sets, each scored on the dev split;
* ``mipro`` (MIPROv2, ``auto=None``): optimization trials (instruction × demo combinations, minibatch-scored);
* ``gepa`` (GEPA): metric calls in total, spent on reflective instruction proposals and their scoring.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dspy

from evigate.errors import ConfigError

OPTIMIZERS: tuple[str, ...] = ("bootstrap", "random-search", "mipro", "gepa")
DEFAULT_BUDGETS: dict[str, int] = {"bootstrap": 8, "random-search": 4, "mipro": 6, "gepa": 60}


@dataclass(frozen=True)
class OptimizerSettings:
    """What the job decided; logged to MLflow as params."""

    name: str
    budget: int
    max_demos: int
    labeled_demos: int
    threshold: float
    num_threads: int
    seed: int

    def params(self) -> dict[str, Any]:
        return {"optimizer": self.name, "budget": self.budget, "max_bootstrapped_demos": self.max_demos,
                "max_labeled_demos": self.labeled_demos, "metric_threshold": self.threshold,
                "num_threads": self.num_threads, "seed": self.seed}


def compile_with(settings: OptimizerSettings, student: dspy.Module, metric: Any, feedback_metric: Any,
                 trainset: Sequence[dspy.Example], valset: Sequence[dspy.Example],
                 reflection_lm: Any = None) -> dspy.Module:
    """Compile ``student`` with the named optimizer; returns the optimized module (student is left untouched)."""
    trainset, valset = list(trainset), list(valset)
    name, budget = settings.name, settings.budget
    if budget < 1:
        raise ValueError(f"--budget must be at least 1, got {budget}")
    if not trainset:
        raise ValueError("the train split is empty; nothing to optimize on")
    if name == "bootstrap":
        optimizer = dspy.BootstrapFewShot(
            metric=metric, metric_threshold=settings.threshold, max_bootstrapped_demos=settings.max_demos,
            max_labeled_demos=settings.labeled_demos, max_rounds=1, max_errors=len(trainset) + 1,
        )
        return optimizer.compile(student, trainset=trainset[:budget])
    if name == "random-search":
        optimizer = dspy.BootstrapFewShotWithRandomSearch(
            metric=metric, metric_threshold=settings.threshold, max_bootstrapped_demos=settings.max_demos,
            max_labeled_demos=settings.labeled_demos, num_candidate_programs=budget,
            num_threads=settings.num_threads, max_errors=len(trainset) + len(valset) + 1,
        )
        return optimizer.compile(student, trainset=trainset, valset=valset or None)
    if name == "mipro":
        if importlib.util.find_spec("optuna") is None:
            raise ConfigError("--optimizer mipro needs the optuna package: pip install optuna (dspy[optuna])")
        optimizer = dspy.MIPROv2(
            metric=metric, auto=None, num_candidates=max(2, min(budget, 6)),
            max_bootstrapped_demos=settings.max_demos, max_labeled_demos=settings.labeled_demos,
            num_threads=settings.num_threads, seed=settings.seed, metric_threshold=settings.threshold,
            max_errors=len(trainset) + len(valset) + 1, verbose=False,
        )
        return optimizer.compile(
            student, trainset=trainset, valset=valset or None, num_trials=budget,
            minibatch=len(valset) > 8, minibatch_size=min(8, max(1, len(valset))),
        )
    if name == "gepa":
        if reflection_lm is None:
            reflection_lm = dspy.settings.lm
        optimizer = dspy.GEPA(
            metric=feedback_metric, max_metric_calls=budget, reflection_lm=reflection_lm,
            # track_stats: detailed_results keeps every candidate and its dev score, which the job logs as trials
            num_threads=settings.num_threads, seed=settings.seed, track_stats=True,
            reflection_minibatch_size=min(3, len(trainset)),
        )
        return optimizer.compile(student, trainset=trainset, valset=valset or None)
    raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(OPTIMIZERS)}")
