"""The Verifier metric on real fixture cases, with values worked out by hand."""

from __future__ import annotations

import dspy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.datasets import VerifierCase, load_verifier_cases, verifier_example
from evigate.optimize.verifier_metric import (
    GateCache,
    VerifierMetric,
    macro_f1_by_class,
    score_verifier,
    summarize_verifier,
)
from evigate.signatures import ClaimCheck, VerifierOutput

VERIFICATIONS = ["direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown",
                 "contradicted"]


@pytest.fixture(scope="module")
def cases() -> dict[str, VerifierCase]:
    return {case.case_id: case for case in load_verifier_cases(["demo_world"])}


@pytest.fixture(scope="module")
def gates() -> GateCache:
    return GateCache()


def predict(labels: dict[str, str], verdict: str = "LOW_CONFID") -> dspy.Prediction:
    checks = [ClaimCheck(claim_id=claim_id, verification=label) for claim_id, label in labels.items()]
    return dspy.Prediction(verifier_output=VerifierOutput(verdict=verdict, claim_checks=checks))


OVERSTATED = "dw-inc05-order123-timeout-overstated"  # gold: direct, direct, overstated -> LOW_CONFID, gate pass
FORGED = "dw-inc05-order123-timeout-forged_invocation_id"  # gold: unsupported (alt external/contradicted), direct


def test_perfect_checks_score_one(cases: dict[str, VerifierCase], gates: GateCache) -> None:
    case = cases[OVERSTATED]
    result = score_verifier(case, predict(case.gold_labels), gates)
    assert result.code_verdict == "LOW_CONFID" and result.claim_accuracy == 1.0 and result.score == 1.0


def test_one_wrong_claim_with_the_right_verdict(cases: dict[str, VerifierCase], gates: GateCache) -> None:
    # claim-3 judged unsupported instead of overstated: 2/3 claims right, verdict still LOW_CONFID.
    labels = {**cases[OVERSTATED].gold_labels, "claim-3": "unsupported"}
    result = score_verifier(cases[OVERSTATED], predict(labels), gates)
    assert result.code_verdict == "LOW_CONFID"
    assert result.score == pytest.approx(0.5 * 2 / 3 + 0.5)


def test_wrong_pass_costs_more_than_anything_else(cases: dict[str, VerifierCase], gates: GateCache) -> None:
    labels = {**cases[OVERSTATED].gold_labels, "claim-3": "direct_observation"}
    result = score_verifier(cases[OVERSTATED], predict(labels, verdict="PASS"), gates)
    assert result.code_verdict == "PASS" and result.wrong_pass
    assert result.score == -1.0
    assert "WRONG PASS" in result.feedback()


def test_missing_checks_count_as_unsupported_and_model_verdict_is_ignored(
    cases: dict[str, VerifierCase], gates: GateCache
) -> None:
    case = cases[OVERSTATED]
    nothing = score_verifier(case, dspy.Prediction(), gates)
    # Every claim unsupported: 0/3 right, yet code lands on LOW_CONFID like gold.
    assert [c.predicted for c in nothing.claims] == ["unsupported"] * 3 and not any(c.checked for c in nothing.claims)
    assert nothing.code_verdict == "LOW_CONFID" and nothing.score == 0.5
    claiming_pass = score_verifier(case, predict(case.gold_labels, verdict="PASS"), gates)
    assert claiming_pass.model_verdict == "PASS" and claiming_pass.code_verdict == "LOW_CONFID"
    assert claiming_pass.score == 1.0


def test_acceptable_alternative_counts_and_gatekeeper_overrides_a_pass(
    cases: dict[str, VerifierCase], gates: GateCache
) -> None:
    case = cases[FORGED]
    alternative = score_verifier(case, predict({"claim-1": "external_unknown", "claim-2": "direct_observation"}), gates)
    assert alternative.claim_accuracy == 1.0 and alternative.code_verdict == "REJECT" and alternative.score == 1.0
    # A Verifier that trusts the forged evidence cannot raise the verdict: code still rejects.
    fooled = score_verifier(case, predict({"claim-1": "direct_observation", "claim-2": "direct_observation"}, "PASS"),
                            gates)
    assert fooled.code_verdict == "REJECT" and not fooled.wrong_pass
    assert fooled.score == pytest.approx(0.5 * 1 / 2 + 0.5)


def test_a_claim_checked_twice_keeps_the_less_favourable_judgement(
    cases: dict[str, VerifierCase], gates: GateCache
) -> None:
    case = cases[OVERSTATED]
    checks = [ClaimCheck(claim_id="claim-3", verification="direct_observation"),
              *(ClaimCheck(claim_id=k, verification=v) for k, v in case.gold_labels.items())]
    result = score_verifier(case, dspy.Prediction(verifier_output=VerifierOutput(verdict="PASS", claim_checks=checks)),
                            gates)
    assert result.claims[2].predicted == "overstated" and result.score == 1.0


def test_dict_output_and_malformed_checks_are_tolerated(cases: dict[str, VerifierCase], gates: GateCache) -> None:
    case = cases[OVERSTATED]
    raw = {"verdict": "nonsense", "claim_checks": [{"claim_id": "claim-1", "verification": "direct_observation"},
                                                    {"claim_id": "claim-2", "verification": "very sure"}]}
    result = score_verifier(case, dspy.Prediction(verifier_output=raw), gates)
    assert [c.predicted for c in result.claims] == ["direct_observation", "unsupported", "unsupported"]
    assert result.model_verdict == "LOW_CONFID"


def test_metric_modes_for_evaluate_bootstrap_and_gepa(cases: dict[str, VerifierCase], gates: GateCache) -> None:
    case = cases[OVERSTATED]
    example = verifier_example(case)
    half = predict({**case.gold_labels, "claim-3": "unsupported", "claim-2": "unsupported"})  # 1/3 right -> 0.6667
    assert VerifierMetric(gates=gates)(example, half) == pytest.approx(0.5 / 3 + 0.5)
    assert VerifierMetric(gates=gates, threshold=0.75)(example, half, trace=[]) is False
    assert VerifierMetric(gates=gates, threshold=0.6)(example, half, trace=[]) is True
    feedback = VerifierMetric(feedback=True, gates=gates)(example, half, None, "judge", None)
    assert isinstance(feedback, dspy.Prediction) and feedback.score == pytest.approx(0.5 / 3 + 0.5)
    assert "claim-2: you said unsupported; correct is direct_observation" in feedback.feedback
    assert "claim-1: correct (direct_observation)" in feedback.feedback


def test_macro_f1_by_hand() -> None:
    # gold a,a,b / predicted a,b,b: F1(a) = 2*1/(2+1), F1(b) = 2*1/(1+2)
    scores = macro_f1_by_class([("overstated", "overstated"), ("overstated", "unsupported"),
                                ("unsupported", "unsupported")])
    assert scores == {"overstated": pytest.approx(2 / 3), "unsupported": pytest.approx(2 / 3)}
    # a label only ever predicted (never gold) still counts, with F1 0
    assert macro_f1_by_class([("contradicted", "direct_observation")]) == {"direct_observation": 0.0,
                                                                           "contradicted": 0.0}


def test_summary_by_hand(cases: dict[str, VerifierCase], gates: GateCache) -> None:
    scores = [
        score_verifier(cases[OVERSTATED], predict(cases[OVERSTATED].gold_labels), gates),  # 3/3, verdict ok
        score_verifier(cases[OVERSTATED], predict({**cases[OVERSTATED].gold_labels, "claim-3": "direct_observation"},
                                                  "PASS"), gates),  # 2/3, wrong PASS
    ]
    summary = summarize_verifier(scores)
    # claims: direct x4 right, overstated right once and predicted direct once
    # F1(direct) = 2*4/(4+5) = 8/9, F1(overstated) = 2*1/(2+1) = 2/3
    assert summary.claim_macro_f1 == pytest.approx((8 / 9 + 2 / 3) / 2)
    assert summary.verdict_accuracy == 0.5 and summary.wrong_pass_count == 1 and summary.wrong_pass_rate == 0.5
    assert summary.mean_score == pytest.approx((1.0 - 1.0) / 2)
    assert summary.verdict_confusion["LOW_CONFID"] == {"PASS": 1, "LOW_CONFID": 1, "REJECT": 0}
    metrics = summary.metrics("dev_")
    assert metrics["dev_wrong_pass_count"] == 1.0 and "dev_f1_overstated" in metrics


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_score_bounds_and_perfect_labels_are_optimal(data: st.DataObject) -> None:
    case_list = load_verifier_cases(["demo_world"], "dev")
    case = data.draw(st.sampled_from(case_list))
    gates = _SHARED_GATES
    labels = {claim_id: data.draw(st.sampled_from(VERIFICATIONS)) for claim_id in case.gold_labels}
    verdict = data.draw(st.sampled_from(["PASS", "LOW_CONFID", "REJECT"]))
    result = score_verifier(case, predict(labels, verdict), gates)
    assert -1.0 <= result.score <= 1.0
    assert (result.score == -1.0) == result.wrong_pass
    assert result.score <= score_verifier(case, predict(case.gold_labels), gates).score == 1.0


_SHARED_GATES = GateCache()
