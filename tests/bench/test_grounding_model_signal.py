"""bench/grounding_model_signal.py: gold per sentence from the record's spans, and the AUC it reports (no model)."""

from __future__ import annotations

import math

from tests.bench.scripts import load_bench


def _load_bench():
    return load_bench("grounding_model_signal")


def test_a_sentence_is_gold_where_an_unwanted_span_overlaps_it_and_benign_spans_do_not_count() -> None:
    bench = _load_bench()
    response = "Order 123 failed at 10:05. The gateway timed out after 5300 ms. It was a sunny day."
    record = {
        "id": "r1", "source": "Order 123 failed at 10:05. The gateway timed out after 3000 ms.", "response": response,
        "hallucination_spans": [
            {"start": response.index("5300"), "end": response.index("5300") + 4, "label_type": "Unwanted.Intrinsic"},
            {"start": response.index("sunny"), "end": response.index("sunny") + 5, "label_type": "Benign"},
        ],
    }
    rows = bench.sentence_rows(record)
    assert [row.gold for row in rows] == [False, True, False]
    assert rows[1].code_label == "contradicted" and rows[0].code_label == "direct_observation"


def test_auc_is_the_chance_that_a_positive_outscores_a_negative() -> None:
    bench = _load_bench()
    assert bench.auc([0.9, 0.8, 0.1, 0.2], [True, True, False, False]) == 1.0
    assert bench.auc([0.1, 0.2, 0.9, 0.8], [True, True, False, False]) == 0.0
    assert bench.auc([0.5, 0.5], [True, False]) == 0.5
    assert math.isnan(bench.auc([0.3], [True]))
