"""Paired bootstrap intervals of a metric's change: the invariants a report relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.optimize.stats import excludes_zero, paired_bootstrap

scores = st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1, max_size=40)


@given(scores, st.data())
def test_interval_holds_the_observed_delta_and_stays_in_range(before: list[float], data: st.DataObject) -> None:
    after = data.draw(st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=len(before),
                               max_size=len(before)))
    delta, low, high = paired_bootstrap(before, after, resamples=200)
    assert -1 - 1e-9 <= low <= high <= 1 + 1e-9
    assert low - 1e-9 <= delta <= high + 1e-9


@given(scores)
def test_no_change_is_no_measured_change(values: list[float]) -> None:
    interval = paired_bootstrap(values, values, resamples=200)
    assert interval == (0.0, 0.0, 0.0)
    assert not excludes_zero(interval)


def test_a_consistent_gain_excludes_zero_and_a_noisy_one_does_not() -> None:
    before = [0.0] * 30
    assert excludes_zero(paired_bootstrap(before, [1.0] * 10 + [0.0] * 20))
    assert not excludes_zero(paired_bootstrap([0.0, 1.0] * 15, [1.0, 0.0] * 15))


def test_seeded_reruns_agree_and_lengths_must_match() -> None:
    before, after = [0.1, 0.5, 0.9, 0.3], [0.2, 0.5, 1.0, 0.1]
    assert paired_bootstrap(before, after, seed=3) == paired_bootstrap(before, after, seed=3)
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap([0.1], [0.1, 0.2])
    assert paired_bootstrap([], []) == (0.0, -1.0, 1.0)
