"""Rule index + metadata YAML (§10.1–§10.2): loading, a user's copy, settings overrides, errors, generated docs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evigate.errors import RuleConfigError
from evigate.rules import Gatekeeper
from evigate.rules.builtin import RULE_CLASSES
from evigate.rules.engine.docs import render_rules_markdown

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "rules"


def test_shipped_rules_match_the_registry_and_the_issue() -> None:
    gatekeeper = Gatekeeper.default()
    assert [spec.id for spec in gatekeeper.rules] == list(RULE_CLASSES)
    assert gatekeeper.verdict_impacts == {
        "schema.executor_v2": "low_confid_on_fail",
        "evidence.invocation_ref": "reject_on_fail",
        "evidence.failed_invocation": "low_confid_on_fail",
        "evidence.excerpt_similarity": "low_confid_on_fail",
        "evidence.misattribution": "reject_on_fail",
        "evidence.input_echo": "low_confid_on_fail",
        "claim.hallucination_phrases": "low_confid_on_fail",
        "claim.evidence_utilization": "warn_only",
        "claim.entity_grounding": "low_confid_on_fail",
        "claim.external_entity": "reject_on_fail",
        "claim.question_echo": "low_confid_on_fail",
        "action.entity_grounding": "warn_only",
        "action.junk_text": "warn_only",
        "action.planted_instruction": "reject_on_fail",
        "action.destructive_command": "warn_only",
    }
    enabled = {spec.id: spec.enabled for spec in gatekeeper.rules}
    assert enabled["claim.evidence_utilization"] is False
    assert sum(enabled.values()) == len(enabled) - 1


def test_one_metadata_file_per_rule_named_after_it() -> None:
    index = yaml.safe_load((RULES_DIR / "index.yaml").read_text("utf-8"))
    ids = [entry["id"] for entry in index["rules"]]
    files = sorted(path.stem for path in (RULES_DIR / "metadata").glob("*.yaml"))
    assert sorted(ids) == files
    for rule_id in ids:
        metadata = yaml.safe_load((RULES_DIR / "metadata" / f"{rule_id}.yaml").read_text("utf-8"))
        assert metadata["id"] == rule_id
        assert set(metadata) <= {"id", "severity", "verdictImpact", "params"}


def test_excerpt_thresholds_are_the_spec_defaults() -> None:
    spec = next(spec for spec in Gatekeeper.default().rules if spec.id == "evidence.excerpt_similarity")
    assert (spec.params.pass_threshold, spec.params.warn_threshold) == (0.5, 0.3)
    assert spec.params.compare_against == ["output_preview", "retrieval_details", "tool_trace_summary"]


def test_with_overrides_on_the_class_and_on_an_instance() -> None:
    overrides = {"evidence.excerpt_similarity": {"enabled": False}, "claim.evidence_utilization": {"enabled": True}}
    from_class = Gatekeeper.with_overrides(overrides)
    from_instance = Gatekeeper.default().with_overrides(overrides)
    for gatekeeper in (from_class, from_instance):
        enabled = {spec.id: spec.enabled for spec in gatekeeper.rules}
        assert not enabled["evidence.excerpt_similarity"] and enabled["claim.evidence_utilization"]
    assert next(s for s in Gatekeeper.default().rules if s.id == "evidence.excerpt_similarity").enabled


def test_overrides_merge_params_key_by_key_in_either_spelling() -> None:
    gatekeeper = Gatekeeper.with_overrides(
        {
            "evidence.excerpt_similarity": {"params": {"pass_threshold": 0.7}},
            "evidence.misattribution": {"verdictImpact": "low_confid_on_fail", "params": {"copyThreshold": 0.9}},
        }
    )
    specs = {spec.id: spec for spec in gatekeeper.rules}
    assert specs["evidence.excerpt_similarity"].params.pass_threshold == 0.7
    assert specs["evidence.excerpt_similarity"].params.warn_threshold == 0.3
    assert specs["evidence.misattribution"].params.copy_threshold == 0.9
    assert gatekeeper.verdict_impacts["evidence.misattribution"] == "low_confid_on_fail"


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        ({"evidence.nope": {"enabled": True}}, ["overrides", "unknown rule 'evidence.nope'"]),
        ({"evidence.excerpt_similarity": {"enable": True}}, ["evidence.excerpt_similarity", "unknown key 'enable'"]),
        (
            {"evidence.excerpt_similarity": {"params": {"passThreshhold": 0.6}}},
            ["evidence.excerpt_similarity", "unknown parameter 'passThreshhold'", "passThreshold"],
        ),
        ({"evidence.excerpt_similarity": {"params": {"passThreshold": 1.5}}}, ["parameter 'passThreshold'"]),
        ({"evidence.excerpt_similarity": {"params": {"passThreshold": 0.2}}}, ["warnThreshold must not exceed"]),
        ({"evidence.excerpt_similarity": {"params": {"compareAgainst": ["raw_output"]}}}, ["compareAgainst"]),
        ({"evidence.invocation_ref": {"verdictImpact": "maybe"}}, ["verdictImpact must be one of"]),
        ({"evidence.invocation_ref": {"enabled": "yes"}}, ["enabled must be true or false"]),
        ({"claim.hallucination_phrases": {"params": {"targetFields": ["claims[.claim_text"]}}}, ["field path"]),
    ],
)
def test_bad_overrides_name_the_rule_and_key(overrides: dict, fragments: list[str]) -> None:
    with pytest.raises(RuleConfigError) as error:
        Gatekeeper.with_overrides(overrides)
    for fragment in fragments:
        assert fragment in str(error.value)


def test_from_yaml_single_file_in_the_spec_shape(tmp_path: Path) -> None:
    path = tmp_path / "my-rules.yaml"
    path.write_text(
        "rules:\n"
        "  - id: claim.evidence_utilization\n    name: Utilization\n    description: 覆盖率\n    enabled: true\n"
        "  - id: evidence.excerpt_similarity\n    enabled: true\n    params: {passThreshold: 0.6}\n"
        "ruleMetadata:\n"
        "  claim.hallucination_phrases:\n    params:\n      blacklist: [显然]\n",
        "utf-8",
    )
    specs = {spec.id: spec for spec in Gatekeeper.from_yaml(path).rules}
    assert specs["claim.evidence_utilization"].enabled and specs["claim.evidence_utilization"].name == "Utilization"
    assert specs["evidence.excerpt_similarity"].params.pass_threshold == 0.6
    assert specs["claim.hallucination_phrases"].params.blacklist == ["显然"]
    assert specs["schema.executor_v2"].enabled  # rules the copy does not mention keep the shipped settings
    assert specs["evidence.excerpt_similarity"].source == str(path)


def test_from_yaml_directory_copy(tmp_path: Path) -> None:
    (tmp_path / "metadata").mkdir()
    (tmp_path / "index.yaml").write_text(
        (RULES_DIR / "index.yaml").read_text("utf-8").replace("enabled: false", "enabled: true"), "utf-8"
    )
    (tmp_path / "metadata" / "evidence.invocation_ref.yaml").write_text(
        "id: evidence.invocation_ref\nseverity: error\nverdictImpact: low_confid_on_fail\nparams: {}\n", "utf-8"
    )
    gatekeeper = Gatekeeper.from_yaml(tmp_path)
    assert all(spec.enabled for spec in gatekeeper.rules)
    assert gatekeeper.verdict_impacts["evidence.invocation_ref"] == "low_confid_on_fail"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("rules: [{id: claim.nope}]\n", "unknown rule 'claim.nope'"),
        ("rules: [{id: schema.executor_v2, colour: red}]\n", "unknown key 'colour'"),
        ("rules: [{id: schema.executor_v2, params: {requiredField: [claims]}}]\n", "unknown parameter 'requiredField'"),
        ("rules: {id: schema.executor_v2}\n", "'rules' must be a list"),
        ("rules: []\nextras: 1\n", "unknown top-level key 'extras'"),
        ("rules: [{id: schema.executor_v2}, {id: schema.executor_v2}]\n", "listed twice"),
        ("rules: [\n", "not valid YAML"),
        ("ruleMetadata: {evidence.misattribution: {params: {copyThreshold: 2}}}\nrules: []\n", "copyThreshold"),
    ],
)
def test_bad_user_files_name_the_file_and_key(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(RuleConfigError) as error:
        Gatekeeper.from_yaml(path)
    assert str(path) in str(error.value)
    assert fragment in str(error.value)


def test_missing_user_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(RuleConfigError, match="not found"):
        Gatekeeper.from_yaml(tmp_path / "absent.yaml")


def test_directory_metadata_id_must_match_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "metadata").mkdir()
    (tmp_path / "index.yaml").write_text("rules: [{id: evidence.invocation_ref}]\n", "utf-8")
    (tmp_path / "metadata" / "evidence.invocation_ref.yaml").write_text("id: schema.executor_v2\n", "utf-8")
    with pytest.raises(RuleConfigError, match="does not match the file name"):
        Gatekeeper.from_yaml(tmp_path)


def test_from_config_applies_file_then_overrides(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules: [{id: claim.external_entity, enabled: false}]\n", "utf-8")
    gatekeeper = Gatekeeper.from_config(
        path, {"claim.external_entity": {"enabled": True, "params": {"minBareNumberDigits": 3}}}
    )
    spec = next(spec for spec in gatekeeper.rules if spec.id == "claim.external_entity")
    assert spec.enabled and spec.params.min_bare_number_digits == 3
    assert Gatekeeper.from_config().verdict_impacts == Gatekeeper.default().verdict_impacts


def test_disabled_rules_do_not_run() -> None:
    gatekeeper = Gatekeeper.with_overrides({rule_id: {"enabled": False} for rule_id in RULE_CLASSES})
    outcome = gatekeeper.validate("not json at all", [], "s-1")
    assert outcome.result.status == "pass" and outcome.normalized is None


def test_docs_are_generated_from_the_index() -> None:
    """docs/rules.md is in sync; regenerate with `python -m evigate.rules.engine.docs > docs/rules.md`."""
    assert (ROOT / "docs" / "rules.md").read_text("utf-8") == render_rules_markdown()


def test_docs_describe_every_rule_and_parameter() -> None:
    text = render_rules_markdown()
    for spec in Gatekeeper.default().rules:
        assert f"## {spec.id}" in text and spec.description in text
        for name in spec.params.model_dump(by_alias=True):
            assert f"`{name}`" in text


def test_the_injection_markers_text_helpers_read_are_the_shipped_rules_own() -> None:
    """rules/text reads the marker list from the metadata file itself (it must not import the Gatekeeper's config):
    the two readings may never drift apart."""
    from evigate.rules.engine.config import load_builtin_specs
    from evigate.rules.text.instructions import shipped_injection_markers

    params = load_builtin_specs()["action.planted_instruction"].params
    assert shipped_injection_markers() == tuple(params.injection_markers)
