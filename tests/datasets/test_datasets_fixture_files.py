"""The fixture file format: one case per YAML/JSON file or JSONL row, validated, with errors that name the place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evigate.datasets import ComposerCase, VerifierCase, read_cases, write_jsonl
from evigate.datasets.loaders import DEMO_WORLD_FIXTURES
from evigate.errors import DatasetError


@pytest.fixture(scope="module")
def sample_case() -> VerifierCase:
    return read_cases(DEMO_WORLD_FIXTURES, VerifierCase)[0]


def _composer(case_id: str = "c-1", **extra: object) -> dict[str, object]:
    return {
        "case_id": case_id, "split": "dev",
        "composer_input": {"original_query": "订单 123 为什么失败？", "verdict": "PASS",
                           "allowed_claims": [{"claim_id": "claim-1", "claim_type": "symptom",
                                               "claim_text": "订单 123 支付失败，错误码 ERR_TIMEOUT。"}]},
        **extra,
    }


def test_one_case_per_yaml_and_json_file_and_one_per_jsonl_row(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("case_id: c-a\nsplit: train\ncomposer_input:\n  original_query: q\n"
                                     "  verdict: REJECT\nmust_contain: [ERR_TIMEOUT, [5.3 秒, 5300ms]]\n",
                                     encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(_composer("c-b")), encoding="utf-8")
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(_composer(f"c-row{i}")) for i in range(3)) + "\n\n",
                                      encoding="utf-8")
    cases = read_cases(tmp_path, ComposerCase)
    assert [case.case_id for case in cases] == ["c-a", "c-b", "c-row0", "c-row1", "c-row2"]
    assert cases[0].must_contain == [["ERR_TIMEOUT"], ["5.3 秒", "5300ms"]]


def test_invalid_jsonl_row_names_file_line_and_field(tmp_path: Path) -> None:
    bad = _composer("c-2")
    bad["split"] = "holdout"
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(_composer()) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"cases\.jsonl:2: invalid ComposerCase: split"):
        read_cases(path, ComposerCase)


def test_duplicate_case_ids_and_non_mapping_files_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(json.dumps(_composer("same")), encoding="utf-8")
    (tmp_path / "two.json").write_text(json.dumps(_composer("same")), encoding="utf-8")
    with pytest.raises(DatasetError, match="already defined"):
        read_cases(tmp_path, ComposerCase)
    listing = tmp_path / "list.yaml"
    listing.write_text("- case_id: x\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="must be a mapping"):
        read_cases(listing, ComposerCase)
    with pytest.raises(DatasetError, match="does not exist"):
        read_cases(tmp_path / "missing", ComposerCase)


def test_blank_must_contain_group_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_composer(must_contain=[[]])), encoding="utf-8")
    with pytest.raises(DatasetError, match="must_contain"):
        read_cases(path, ComposerCase)


def test_gold_labels_must_cover_exactly_the_claims(sample_case: VerifierCase) -> None:
    data = sample_case.model_dump(mode="json")
    missing = dict(data, gold_labels=dict(list(data["gold_labels"].items())[1:]))
    with pytest.raises(ValueError, match="unlabelled"):
        VerifierCase.model_validate(missing)
    extra = dict(data, gold_labels={**data["gold_labels"], "claim-99": "unsupported"})
    with pytest.raises(ValueError, match="unknown"):
        VerifierCase.model_validate(extra)


def test_invocations_must_belong_to_the_case_session(sample_case: VerifierCase) -> None:
    data = sample_case.model_dump(mode="json")
    data["invocations"][0]["session_id"] = "someone-else"
    with pytest.raises(ValueError, match="another session"):
        VerifierCase.model_validate(data)


def test_write_then_read_round_trips(tmp_path: Path, sample_case: VerifierCase) -> None:
    path = tmp_path / "out.jsonl"
    assert write_jsonl(path, [sample_case]) == 1
    assert read_cases(path, VerifierCase) == [sample_case]


def test_accepts_counts_gold_and_alternatives(sample_case: VerifierCase) -> None:
    claim_id, gold = next(iter(sample_case.gold_labels.items()))
    case = sample_case.model_copy(update={"acceptable_labels": {claim_id: ["external_unknown"]}})
    assert case.accepts(claim_id, gold)
    assert case.accepts(claim_id, "external_unknown")
    assert not case.accepts(claim_id, "reasonable_inference" if gold != "reasonable_inference" else "contradicted")
