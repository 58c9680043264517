"""EntityVocabulary: names a deployment knows are entities whatever their shape; the reader never crashes."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evigate.errors import RuleConfigError
from evigate.rules import Gatekeeper
from evigate.rules.text.entities import entity_occurs, extract_entities, normalize
from evigate.rules.text.vocabulary import EntityVocabulary

VOCABULARY = EntityVocabulary(
    services=frozenset({"orders", "billing"}), error_codes=frozenset({"E42"}),
    identifiers=frozenset({"settle", "p99_latency"}), id_patterns=(r"#[a-z]{5}\b",),
)


def _texts(text: str, vocabulary: EntityVocabulary | None = None) -> list[tuple[str, str]]:
    return [(entity.kind, entity.text) for entity in extract_entities(text, vocabulary)]


def test_vocabulary_names_are_entities_only_with_the_vocabulary() -> None:
    text = "orders 服务 settle 失败 E42，工单 #kqzvx"
    assert _texts(text) == []
    assert _texts(text, VOCABULARY) == [("service", "orders"), ("identifier", "settle"), ("error_code", "E42"),
                                        ("identifier", "#kqzvx")]


def test_vocabulary_names_match_whole_words_only() -> None:
    assert _texts("reorders and settlement", VOCABULARY) == []


def test_gatekeeper_with_vocabulary_returns_a_new_gate_and_keeps_overrides() -> None:
    base = Gatekeeper.with_overrides({"claim.evidence_utilization": {"enabled": True}})
    gate = base.with_vocabulary(VOCABULARY)
    assert gate is not base and base.vocabulary is None and gate.vocabulary == VOCABULARY
    assert {spec.id: spec.enabled for spec in gate.rules} == {spec.id: spec.enabled for spec in base.rules}
    merged = gate.with_vocabulary(EntityVocabulary(services=frozenset({"ledger"})))
    assert merged.vocabulary is not None and merged.vocabulary.services == {"orders", "billing", "ledger"}
    assert gate.with_overrides({}).vocabulary == VOCABULARY
    assert Gatekeeper.with_vocabulary(None).vocabulary is None


def test_a_claim_naming_an_unknown_domain_service_is_rejected_only_with_the_vocabulary() -> None:
    invocation = {"id": 1, "session_id": "s", "tool_name": "query_logs", "output_preview": "[orders] settle ok"}
    data = {"answer_version": "executor_evidence_v2", "claims": [{
        "claim_id": "c1", "claim_type": "symptom", "claim_text": "billing 的 settle 成功", "support_level": "direct",
        "evidence_bindings": [{"source_type": "tool_trace", "source_id": None, "tool_name": "query_logs",
                               "source_invocation_ids": [1], "evidence_excerpt": "[orders] settle ok"}]}]}
    assert Gatekeeper.default().validate(data, [invocation], "s").excluded_claims == []
    assert Gatekeeper.default().with_vocabulary(VOCABULARY).validate(data, [invocation], "s").excluded_claims == [
        "c1"]


@pytest.mark.parametrize("bad", [
    {"services": "orders"}, {"identifiers": frozenset({1})}, {"id_patterns": ("ORD(",)}, {"id_patterns": "ORD"},
])
def test_bad_vocabularies_are_clear_errors(bad: dict) -> None:
    with pytest.raises(RuleConfigError):
        EntityVocabulary(**bad)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_reading_any_text_never_fails_and_every_name_occurs_in_its_own_text(text: str) -> None:
    written = normalize(text)  # claims are read after NFKC; evidence is searched as written
    for entity in extract_entities(text, VOCABULARY):
        if entity.kind not in ("time", "number"):
            assert entity_occurs(entity, written), (entity, text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([
    "OOMKilled", "v1.30.4", "10.244.1.13", "x16", "4 failed", "1/1", "kube_pod_status", "restartCount", "nAaB",
    "chart-0.22.1", "命名空间 finance", "1723435438", "5300ms", "pay-gateway", "Evicted", " ", "，", "的",
]), max_size=12))
@example(["4 failed", " ", "1723435438"])  # "failed   1723435438": the claim side read a label the evidence side missed
def test_every_entity_of_a_claim_is_grounded_in_the_same_text(parts: list[str]) -> None:
    text = " ".join(parts)
    for entity in extract_entities(text):
        assert entity_occurs(entity, text), (entity, text)
