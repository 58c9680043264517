"""Properties of code confirmation and caps on the labelled fixtures (demo world + HolmesGPT-derived)."""

from __future__ import annotations

from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.datasets import load_verifier_cases
from evigate.datasets.fixtures import VerifierCase
from evigate.optimize.verifier_metric import GateCache
from evigate.rules import decide_verdict
from evigate.rules.gate.session import claim_key, iter_claims
from evigate.rules.verdict.ceilings import FAVOURABLE, ceilings_of
from evigate.rules.verdict.matrix import is_critical
from evigate.signatures import ClaimCheck

RANK = {"REJECT": 0, "LOW_CONFID": 1, "PASS": 2}


@lru_cache(maxsize=1)
def _cases() -> tuple[VerifierCase, ...]:
    return tuple(load_verifier_cases(["demo_world", "holmesgpt"]))


@lru_cache(maxsize=1)
def _gates() -> GateCache:
    return GateCache()


def _decide(case: VerifierCase, labels: dict[str, str], *, with_code: bool = True):  # type: ignore[no-untyped-def]
    gates = _gates()
    gate, status = gates.outcome(case)
    code = gates.code_judgement(case).confirmed if with_code and status == "valid" else None
    checks = [ClaimCheck(claim_id=k, verification=v) for k, v in labels.items()]  # type: ignore[arg-type]
    return decide_verdict(gate.normalized, checks, gate.result, status, gates.gatekeeper.verdict_impacts,
                          failed_claims=gate.failed_claims, excluded_claims=gate.excluded_claims, code_checks=code)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_code_confirmed_labels_never_beat_the_gold_verdict(data: st.DataObject) -> None:
    """Code labels plus a model at least as strict as gold never reach a verdict more favourable than gold's."""
    case = data.draw(st.sampled_from(_cases()))
    labels = {claim_id: data.draw(st.sampled_from(FAVOURABLE[FAVOURABLE.index(gold):]))
              for claim_id, gold in case.gold_labels.items()}
    decision = _decide(case, labels)
    assert RANK[decision.verdict] <= RANK[case.gold_verdict], (case.case_id, labels, decision.reasons[:3])


def test_code_confirmed_labels_with_gold_labels_for_the_rest_never_beat_gold() -> None:
    worse = [(c.case_id, _decide(c, dict(c.gold_labels)).verdict) for c in _cases()
             if RANK[_decide(c, dict(c.gold_labels)).verdict] > RANK[c.gold_verdict]]
    assert worse == []


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_pass_needs_a_critical_claim_code_or_evidence_shows_as_observed(data: st.DataObject) -> None:
    """Whatever the model says: PASS needs a critical, uncapped, unfailed claim that is direct_observation."""
    case = data.draw(st.sampled_from(_cases()))
    labels = {claim_id: data.draw(st.sampled_from(FAVOURABLE)) for claim_id in case.gold_labels}
    decision = _decide(case, labels)
    if decision.verdict != "PASS":
        return
    gate, _ = _gates().outcome(case)
    ceilings = ceilings_of(gate.normalized)
    observed = [
        claim_key(claim, index) for index, claim in iter_claims(gate.normalized)
        if is_critical(claim) and decision.effective_checks[claim_key(claim, index)] == "direct_observation"
        and claim_key(claim, index) not in ceilings and claim_key(claim, index) not in decision.failed_claims
        and claim.get("support_level") != "indirect"
    ]
    assert observed, (case.case_id, labels)


def test_the_issue_wrong_pass_is_gone() -> None:
    """dw-inc02-sms-provider-inference_only: an indirect root cause the model called direct was a PASS (gold LOW)."""
    case = next(c for c in _cases() if c.case_id == "dw-inc02-sms-provider-inference_only")
    decision = _decide(case, dict.fromkeys(case.gold_labels, "direct_observation"))
    assert decision.verdict == "LOW_CONFID" == case.gold_verdict


def _with_observations(case: VerifierCase, labels: dict[str, str]):  # type: ignore[no-untyped-def]
    """The round's path: code's observations added to the parsed output, judged by every rule, then decided."""
    from evigate.rules import ParsedOutput, parse_executor_output
    from evigate.rules.verdict.anchor_observations import add_anchor_observations
    from evigate.rules.verdict.confirmation import confirm_by_code
    from evigate.rules.verdict.junk_claims import add_excerpt_observations

    gatekeeper = _gates().gatekeeper
    query = case.verifier_input.original_query
    parsed = parse_executor_output(case.verifier_input.executor_raw_output)
    session = gatekeeper.session_index(case.invocations, case.session_id, case.verifier_input.tool_trace_summary, query)
    data, excerpt = add_excerpt_observations(parsed.data, session, query=query)
    data, anchored = add_anchor_observations(data, session, query=query)
    added = [item.claim_id for item in (*excerpt, *anchored)]
    parsed = ParsedOutput(parsed.status, parsed.detail, data)
    gate = gatekeeper.validate(parsed, case.invocations, case.session_id,
                               trace_summary=case.verifier_input.tool_trace_summary, query=query)
    code = confirm_by_code(gate.normalized, session, failed_claims=gate.failed_claims).confirmed
    checks = [ClaimCheck(claim_id=k, verification=v) for k, v in labels.items()]  # type: ignore[arg-type]
    return decide_verdict(gate.normalized, checks, gate.result, parsed.status, gatekeeper.verdict_impacts,
                          failed_claims=gate.failed_claims, excluded_claims=gate.excluded_claims, code_checks=code,
                          observations=added), added


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_observations_code_adds_never_beat_the_gold_verdict(data: st.DataObject) -> None:
    """Anchor and excerpt observations on every labelled fixture: with a model at least as strict as gold for the
    Executor's claims, the verdict is never more favourable than gold's."""
    case = data.draw(st.sampled_from(_cases()))
    labels = {claim_id: data.draw(st.sampled_from(FAVOURABLE[FAVOURABLE.index(gold):]))
              for claim_id, gold in case.gold_labels.items()}
    decision, added = _with_observations(case, labels)
    assert RANK[decision.verdict] <= RANK[case.gold_verdict], (case.case_id, added, decision.reasons[:3])


def test_the_fixtures_give_code_observations_to_judge() -> None:
    """The property above is not vacuous: many labelled sessions get observations added by code."""
    added = [case.case_id for case in _cases() if _with_observations(case, dict(case.gold_labels))[1]]
    assert len(added) >= 20, len(added)
