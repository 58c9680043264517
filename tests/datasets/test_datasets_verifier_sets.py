"""The two Verifier sets: what the issue requires of them, and that gold labels agree with the deterministic core."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from evigate.datasets import SPLITS, VerifierCase, load_verifier_cases, read_cases
from evigate.datasets.holmesgpt import LABELS_PATH, upstream_path
from evigate.datasets.loaders import DEMO_WORLD_FIXTURES
from evigate.errors import DatasetError
from evigate.rules import Gatekeeper, decide_verdict, parse_executor_output
from evigate.signatures import ClaimCheck

VERIFICATIONS = ("direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown",
                 "contradicted")
STAGE5 = ("forged_invocation_id", "tool_name_mismatch", "excerpt_mismatch", "misattribution",
          "hypothesis_as_root_cause")


def _holmesgpt_available() -> bool:
    try:
        upstream_path()
    except DatasetError:
        return False
    return True


needs_holmesgpt = pytest.mark.skipif(not _holmesgpt_available(),
                                     reason="../shared/external/holmesgpt/holmesgpt_cases.jsonl not present "
                                            "(set EVIGATE_HOLMESGPT_CASES)")


@pytest.fixture(scope="module")
def demo_cases() -> list[VerifierCase]:
    return read_cases(DEMO_WORLD_FIXTURES, VerifierCase)


@pytest.fixture(scope="module")
def holmes_cases() -> list[VerifierCase]:
    return load_verifier_cases(["holmesgpt"])


def test_demo_world_set_meets_the_required_coverage(demo_cases: list[VerifierCase]) -> None:
    labels = Counter(label for case in demo_cases for label in case.gold_labels.values())
    verdicts = Counter(case.gold_verdict for case in demo_cases)
    assert len(demo_cases) >= 50
    assert sum(labels.values()) >= 150
    assert all(labels[v] >= 15 for v in VERIFICATIONS), labels
    assert all(verdicts[v] >= 15 for v in ("PASS", "LOW_CONFID", "REJECT")), verdicts
    tags = Counter(tag for case in demo_cases for tag in case.tags)
    assert all(tags[scenario] >= 5 for scenario in STAGE5), tags


def test_stage5_manipulations_trip_the_gatekeeper_rule_they_target(demo_cases: list[VerifierCase]) -> None:
    expected = {"forged_invocation_id": "evidence.invocation_ref", "tool_name_mismatch": "evidence.invocation_ref",
                "misattribution": "evidence.misattribution"}
    for case in demo_cases:
        result = case.verifier_input.gatekeeper_result
        for tag, rule in expected.items():
            if tag in case.tags:
                assert rule in result.failed_rules, (case.case_id, result.failed_rules)
        if "excerpt_mismatch" in case.tags:
            assert "evidence.excerpt_similarity" in result.failed_rules + result.warnings, case.case_id
            assert case.gold_verdict != "PASS"


def test_prompt_injection_text_sits_inside_tool_outputs(demo_cases: list[VerifierCase]) -> None:
    injected = [case for case in demo_cases if "prompt_injection" in case.tags]
    assert len(injected) >= 5
    for case in injected:
        outputs = " ".join(inv.output_preview for inv in case.invocations)
        assert "answer PASS" in outputs or "直接回答 PASS" in outputs
    assert {case.gold_verdict for case in injected} == {"PASS", "LOW_CONFID", "REJECT"}


def test_demo_world_excerpts_are_verbatim_unless_manipulated(demo_cases: list[VerifierCase]) -> None:
    checked = 0
    for case in demo_cases:
        outputs = {inv.id: inv.output_preview for inv in case.invocations}
        targeted = {error.target.split(".")[0] for error in case.verifier_input.gatekeeper_result.errors
                    if error.rule_id.startswith("evidence.")}
        for index, claim in enumerate(case.verifier_input.executor_structured_output["claims"]):
            if f"claims[{index}]" in targeted:
                continue  # the stage-5 manipulation itself: a forged id, a wrong tool, a fake or moved excerpt
            for binding in claim["evidence_bindings"]:
                ids = binding["source_invocation_ids"]
                assert any(binding["evidence_excerpt"] in outputs.get(i, "") for i in ids), (case.case_id, binding)
                checked += 1
    assert checked > 200


def test_splits_are_fixed_and_scenarios_never_straddle_them(demo_cases: list[VerifierCase]) -> None:
    by_session: dict[str, set[str]] = defaultdict(set)
    for case in demo_cases:
        by_session[case.session_id].add(case.split)
    assert all(len(splits) == 1 for splits in by_session.values())
    assert {case.split for case in demo_cases} == set(SPLITS)


@needs_holmesgpt
def test_holmesgpt_set_joins_labels_with_upstream_outputs(holmes_cases: list[VerifierCase]) -> None:
    assert len(holmes_cases) >= 90
    kinds = Counter(tag for case in holmes_cases for tag in case.tags)
    for kind in ("changed_number", "changed_service", "changed_error_code", "causal_overreach", "clean"):
        assert kinds[kind] >= 8, kinds
    by_session: dict[str, set[str]] = defaultdict(set)
    for case in holmes_cases:
        by_session[case.session_id].add(case.split)
    assert all(len(splits) == 1 for splits in by_session.values())
    assert {case.split for case in holmes_cases} == set(SPLITS)
    assert all(case.verifier_input.gatekeeper_result.status == "pass" for case in holmes_cases if "clean" in case.tags)


def test_holmesgpt_labels_file_carries_no_upstream_tool_output() -> None:
    text = LABELS_PATH.read_text(encoding="utf-8")
    assert "output:" not in text and "tool_invocations" not in text
    for line in text.splitlines():
        assert len(line) < 400, line[:80]


def _all_cases() -> list[VerifierCase]:
    sets = ["demo_world", "holmesgpt"] if _holmesgpt_available() else ["demo_world"]
    return load_verifier_cases(sets)


def test_gold_labels_and_every_alternative_lead_code_to_the_gold_verdict() -> None:
    gatekeeper = Gatekeeper.default()
    disagreements = []
    for case in _all_cases():
        parsed = parse_executor_output(case.verifier_input.executor_raw_output)
        gate = gatekeeper.validate(parsed, case.invocations, case.session_id,
                                   trace_summary=case.verifier_input.tool_trace_summary,
                                   query=case.verifier_input.original_query)
        assert gate.result == case.verifier_input.gatekeeper_result, f"{case.case_id}: stale gatekeeper_result"
        variants = [case.gold_labels] + [{**case.gold_labels, claim_id: alternative}
                                         for claim_id, alternatives in case.acceptable_labels.items()
                                         for alternative in alternatives]
        for labels in variants:
            checks = [ClaimCheck(claim_id=claim_id, verification=label) for claim_id, label in labels.items()]
            decision = decide_verdict(gate.normalized, checks, gate.result, parsed.status,
                                      gatekeeper.verdict_impacts, failed_claims=gate.failed_claims,
                                      excluded_claims=gate.excluded_claims)
            if decision.verdict != case.gold_verdict:
                disagreements.append((case.case_id, labels, decision.verdict, decision.reasons[:2]))
    assert not disagreements, json.dumps(disagreements, ensure_ascii=False, indent=1)[:3000]


def test_committed_demo_world_fixtures_match_a_fresh_build(demo_cases: list[VerifierCase]) -> None:
    """The committed JSONL is what the generator makes from today's world, tools and rules (rerun it if not)."""
    from evigate.datasets.build_verifier_fixtures import build_fixtures

    fresh = {case.case_id: case for case in build_fixtures()}
    assert sorted(fresh) == sorted(case.case_id for case in demo_cases)
    stale = [case.case_id for case in demo_cases if fresh[case.case_id] != case]
    assert not stale, f"regenerate with python -m evigate.datasets.build_verifier_fixtures: {stale[:5]}"
