"""Confidence intervals for benchmark figures: Wilson for rates, a seeded percentile bootstrap for the median."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

Z95 = 1.959963984540054


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float, float]:
    """(rate, low, high) of ``successes`` of ``total`` with the Wilson score interval; (0, 0, 1) for no trials."""
    if total <= 0:
        return 0.0, 0.0, 1.0
    if not 0 <= successes <= total:
        raise ValueError(f"successes must lie in 0..{total}, got {successes}")
    rate = successes / total
    denominator = 1 + z * z / total
    centre = (rate + z * z / (2 * total)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total)) / denominator
    # min/max: at 0 and 1 rounding would otherwise put the bound a hair inside the rate itself
    return rate, max(0.0, min(rate, centre - half)), min(1.0, max(rate, centre + half))


def bootstrap_median(values: Sequence[float], resamples: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float] | None:
    """(median, low, high): percentile bootstrap interval of the median, seeded so reruns agree; None if empty."""
    if not values:
        return None
    rng = random.Random(seed)
    data = list(values)
    medians = sorted(statistics.median(rng.choices(data, k=len(data))) for _ in range(resamples))
    tail = (1 - level) / 2
    low = medians[int(tail * (resamples - 1))]
    high = medians[math.ceil((1 - tail) * (resamples - 1))]
    return statistics.median(data), low, high


def paired_bootstrap(before: Sequence[float], after: Sequence[float], resamples: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float]:
    """(mean delta, low, high): percentile bootstrap interval of ``mean(after) - mean(before)`` over paired examples.

    Pairs are resampled together (the same example scored before and after), so the interval reflects how the
    change moved each example, not the spread between examples. Seeded, so a rerun of a report agrees. With no
    pairs the delta is 0 with the widest interval there is for scores in 0..1, (0, -1, 1): nothing was shown.
    """
    if len(before) != len(after):
        raise ValueError(f"paired scores differ in length: {len(before)} before, {len(after)} after")
    if not before:
        return 0.0, -1.0, 1.0
    deltas = [b - a for a, b in zip(before, after, strict=True)]
    rng = random.Random(seed)
    count = len(deltas)
    means = sorted(sum(rng.choices(deltas, k=count)) / count for _ in range(resamples))
    tail = (1 - level) / 2
    low = means[int(tail * (resamples - 1))]
    high = means[math.ceil((1 - tail) * (resamples - 1))]
    return sum(deltas) / count, low, high


def excludes_zero(interval: tuple[float, float, float]) -> bool:
    """Whether a (delta, low, high) interval lies wholly above or wholly below zero: a measured change."""
    _, low, high = interval
    return low > 0 or high < 0
