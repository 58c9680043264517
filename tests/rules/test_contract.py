"""The one accessor of the Executor output (rules/contract.py) names only fields of the typed contract, and reads
malformed output the way the Gatekeeper needs it: wrong types read as absent, nothing raises."""

from __future__ import annotations

import pathlib
import re

import pytest

from evigate.rules import contract
from evigate.signatures.executor import Claim, EvidenceBinding, ExecutorOutputV2, Hypothesis, RecommendedAction

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = (ExecutorOutputV2, Claim, EvidenceBinding, Hypothesis, RecommendedAction)


def _field_constants() -> dict[str, str]:
    return {name: value for name, value in vars(contract).items()
            if name.isupper() and isinstance(value, str)}


def test_every_field_name_is_a_field_of_its_model() -> None:
    constants = _field_constants()
    assert set(constants.values()) == set(contract.OWNER)
    for name, owner in contract.OWNER.items():
        assert name in owner.model_fields, f"{name} is no field of {owner.__name__}"


def test_every_model_field_has_a_name() -> None:
    named = set(contract.OWNER)
    for model in MODELS:
        missing = set(model.model_fields) - named
        assert not missing, f"{model.__name__} fields without an accessor name: {sorted(missing)}"


def test_no_core_code_spells_an_executor_field_outside_the_contract() -> None:
    """A quoted field name in the core or the app code would survive a rename of the contract unnoticed."""
    names = {"claim_text", "evidence_excerpt", "source_invocation_ids", "evidence_bindings", "hypothesis_text",
             "action_text"}
    pattern = re.compile("|".join(rf"[\"']{name}[\"']" for name in names))
    found = []
    for folder in ("rules", "modules", "evigate"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "rules" / "contract.py":
                continue
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "read these through evigate.rules.contract:\n" + "\n".join(found)


@pytest.mark.parametrize("claim", [
    {"claim_text": ["a"], "claim_type": ["root_cause"], "support_level": 3, "evidence_bindings": "x"},
    {"claim_text": None, "evidence_bindings": [1, "b", None]},
    {},
])
def test_malformed_claims_read_as_absent(claim: dict[str, object]) -> None:
    assert contract.claim_text(claim) == ""
    assert contract.claim_type(claim) is None
    assert contract.support_level(claim) is None
    assert list(contract.iter_bindings(claim)) == []
    assert contract.claim_key(claim, 2) == "claims[2]"


def test_malformed_outputs_yield_only_object_claims() -> None:
    assert list(contract.iter_claims(None)) == []
    assert list(contract.iter_claims({"claims": "text"})) == []
    assert list(contract.iter_claims({"claims": ["a", {"claim_id": "c"}, 3]})) == [(1, {"claim_id": "c"})]


def test_bindings_tolerate_loose_ids_and_texts() -> None:
    binding = {"source_invocation_ids": [1, "2", 3.0, True, "x", 2.5], "tool_name": 7, "evidence_excerpt": "ok"}
    assert contract.binding_ids(binding) == [1, 2, 3]
    assert contract.binding_ids({"source_invocation_ids": "4"}) == [4]
    assert contract.raw_invocation_ids({"source_invocation_ids": "4"}) == []
    assert contract.tool_of(binding) == ""
    assert contract.excerpt_of(binding) == "ok"
    assert contract.strings_of({"needed_evidence": ["a", 1, "b"]}, contract.NEEDED_EVIDENCE) == ["a", "b"]
