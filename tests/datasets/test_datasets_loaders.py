"""Loaders to dspy.Example, fixed splits, the case registry, dataset digests, and the Composer set's shape."""

from __future__ import annotations

from collections import Counter

import dspy
import pandas as pd
import pytest

from evigate.datasets import (
    case_of,
    composer_examples,
    dataset_digest,
    load_composer_cases,
    load_verifier_cases,
    verifier_example,
    verifier_examples,
)
from evigate.errors import DatasetError
from evigate.signatures import ComposerInput, VerifierInput


def test_verifier_examples_take_only_the_verifier_input() -> None:
    examples = verifier_examples("dev", sets=["demo_world"])
    assert examples and all(set(example.inputs().keys()) == {"verifier_input"} for example in examples)
    first = examples[0]
    assert isinstance(first.verifier_input, VerifierInput)
    case = case_of(first)
    assert case.case_id == first.case_id and case.split == "dev"
    # The gold judgement mirrors the labels, so labelled demos carry the predictor's output field.
    assert {check.claim_id: check.verification for check in first.judgement.claim_checks} == case.gold_labels
    assert first.judgement.verdict == case.gold_verdict


def test_examples_do_not_carry_tool_outputs_and_tables_serialise_as_json() -> None:
    example = verifier_examples("test", sets=["demo_world"])[0]
    assert "case" not in example and "invocations" not in example
    frame = pd.DataFrame({"verifier_input": [example.verifier_input], "judgement": [example.judgement]})
    text = frame.to_json(orient="split", force_ascii=False)
    assert "model_fields" not in text and example.verifier_input.original_query in text


def test_splits_partition_each_set() -> None:
    everything = load_verifier_cases(["demo_world"])
    by_split = [load_verifier_cases(["demo_world"], split) for split in ("train", "dev", "test")]
    assert sum(len(part) for part in by_split) == len(everything)
    assert all(by_split)
    assert {case.case_id for part in by_split for case in part} == {case.case_id for case in everything}


def test_unknown_set_and_unregistered_example_fail_clearly() -> None:
    with pytest.raises(DatasetError, match="unknown Verifier set"):
        load_verifier_cases(["faithbench"])
    with pytest.raises(DatasetError, match="no fixture case registered"):
        case_of(dspy.Example(case_id="never-loaded", verifier_input=None))


def test_digest_is_order_independent_and_changes_with_a_label() -> None:
    cases = load_verifier_cases(["demo_world"], "dev")[:6]
    assert dataset_digest(cases) == dataset_digest(list(reversed(cases)))
    changed = cases[0].model_copy(update={"gold_verdict": "REJECT" if cases[0].gold_verdict != "REJECT" else "PASS"})
    assert dataset_digest([changed, *cases[1:]]) != dataset_digest(cases)


def test_case_registry_follows_the_latest_example() -> None:
    case = load_verifier_cases(["demo_world"], "train")[0]
    relabelled = case.model_copy(update={"gold_verdict": "REJECT"})
    example = verifier_example(relabelled)
    assert case_of(example).gold_verdict == "REJECT"
    verifier_example(case)  # restore the registry for other tests


def test_composer_set_covers_the_three_verdicts_with_content_rules() -> None:
    cases = load_composer_cases()
    verdicts = Counter(case.composer_input.verdict for case in cases)
    assert len(cases) >= 60
    assert min(verdicts.values()) >= 15 and set(verdicts) == {"PASS", "LOW_CONFID", "REJECT"}
    assert sum(bool(case.must_contain) for case in cases) >= 55
    assert sum(bool(case.must_not_contain) for case in cases) >= 15
    for case in cases:
        if case.composer_input.verdict == "REJECT":
            assert case.composer_input.allowed_hypotheses == []
    examples = composer_examples("dev")
    assert examples and all(set(example.inputs().keys()) == {"composer_input"} for example in examples)
    assert isinstance(examples[0].composer_input, ComposerInput)


def test_must_not_contain_never_names_allowed_material() -> None:
    for case in load_composer_cases():
        material = case.composer_input.model_dump_json()
        for forbidden in case.must_not_contain:
            assert forbidden not in material, (case.case_id, forbidden)


def test_generated_composer_cases_match_a_fresh_build() -> None:
    """gen-* files are what build_composer_fixtures makes from today's Verifier cases and rules (rerun it if not)."""
    from evigate.datasets.build_composer_fixtures import SOURCE_VARIANTS, composer_case

    committed = {case.case_id: case for case in load_composer_cases() if "generated" in case.tags}
    fresh = {}
    for case in load_verifier_cases(["demo_world"]):
        if case.tags[1] in SOURCE_VARIANTS:
            built = composer_case(case)
            fresh[built.case_id] = built
    assert sorted(fresh) == sorted(committed)
    stale = [case_id for case_id, case in fresh.items() if committed[case_id] != case]
    assert not stale, f"regenerate with python -m evigate.datasets.build_composer_fixtures: {stale[:5]}"
