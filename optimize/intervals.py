"""Paired bootstrap 95 % intervals of the change a compiled program made, per split and per-example metric.

The baseline and the optimized program are scored on the same examples, so each example gives a pair (before,
after), matched by ``case_id``. The interval is a seeded percentile bootstrap of the mean per-example change
(:func:`evigate.optimize.stats.paired_bootstrap`): if it excludes zero, the change is measured, not noise.
Set-level metrics (macro-F1 over claims, counts) have no per-example value to pair; they get no interval, the
per-example ``score`` carries it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.optimize.stats import excludes_zero, paired_bootstrap

Interval = tuple[float, float, float]
"""(delta, low, high): the mean change after − before and its 95 % interval."""

PER_EXAMPLE_RATES: dict[str, str] = {"verdict_accuracy": "verdict_correct", "clean_rate": "clean"}
"""Summary metrics that are the mean of a per-example attribute, so they pair like ``score``."""


def paired_values(before: Sequence[Any], after: Sequence[Any], attribute: str) -> tuple[list[float], list[float]]:
    """The per-example ``attribute`` of the examples scored both times, paired by ``case_id`` in ``before``'s order."""
    after_by_id = {score.case_id: score for score in after}
    pairs = [(score, after_by_id[score.case_id]) for score in before if score.case_id in after_by_id]
    return ([float(getattr(old, attribute)) for old, _ in pairs], [float(getattr(new, attribute)) for _, new in pairs])


def delta_intervals(baseline: Sequence[Any], optimized: Sequence[Any], seed: int = 0) -> dict[str, Interval]:
    """Metric name → (delta, low, high) for ``score`` and every per-example rate both score lists carry."""
    intervals = {"score": paired_bootstrap(*paired_values(baseline, optimized, "score"), seed=seed)}
    for metric, attribute in PER_EXAMPLE_RATES.items():
        if baseline and all(hasattr(score, attribute) for score in [*baseline, *optimized]):
            intervals[metric] = paired_bootstrap(*paired_values(baseline, optimized, attribute), seed=seed)
    return intervals


def split_intervals(baseline: Mapping[str, Any], optimized: Mapping[str, Any],
                    splits: Sequence[str] = ("dev", "test"), seed: int = 0) -> dict[str, dict[str, Interval]]:
    """Split → metric → interval, from the ``EvalResult`` of each split before and after."""
    return {split: delta_intervals(baseline[split].scores, optimized[split].scores, seed)
            for split in splits if split in baseline and split in optimized}


def interval_metrics(intervals: Mapping[str, Mapping[str, Interval]]) -> dict[str, float]:
    """MLflow metrics: ``delta_<split>_<metric>`` and its ``_ci_low`` / ``_ci_high``."""
    metrics: dict[str, float] = {}
    for split, by_metric in intervals.items():
        for metric, (delta, low, high) in by_metric.items():
            name = f"delta_{split}_{metric}"
            metrics.update({name: delta, f"{name}_ci_low": low, f"{name}_ci_high": high})
    return metrics


def format_interval(interval: Interval) -> str:
    _, low, high = interval
    return f"[{low:+.3f}, {high:+.3f}]"


def verdict_line(split: str, intervals: Mapping[str, Interval]) -> str:
    """One sentence per split: does the score's 95 % interval exclude zero?"""
    interval = intervals["score"]
    if excludes_zero(interval):
        direction = "gained" if interval[0] > 0 else "lost"
        return f"{split}: score Δ {interval[0]:+.3f}, 95 % CI {format_interval(interval)} excludes zero — {direction}"
    return (f"{split}: score Δ {interval[0]:+.3f}, 95 % CI {format_interval(interval)} includes zero — "
            "no measured change")
