"""check_claim_echo: restating a disallowed claim is caught; hedged mentions and allowed claims are not."""

from __future__ import annotations

from evigate.rules import check_claim_echo
from evigate.rules.verdict.matrix import VerdictDecision

NORMALIZED = {"claims": [
    {"claim_id": "c1", "claim_type": "symptom", "claim_text": "pay-gateway 超时 5300ms"},
    {"claim_id": "c2", "claim_type": "root_cause", "claim_text": "根因是 unionpay 通道整体故障"},
    {"claim_id": "c3", "claim_type": "symptom", "claim_text": "订单 123 支付失败并出现 ERR_TIMEOUT"},
    {"claim_id": "c4", "claim_type": "symptom", "claim_text": "短"},
]}


def decision(**checks: str) -> VerdictDecision:
    return VerdictDecision(verdict="LOW_CONFID", groundedness_score=0.5, effective_checks=checks,
                           excluded_claims=["c2"])


def test_excluded_claims_may_not_appear_at_all() -> None:
    problems = check_claim_echo(["可能根因是 unionpay 通道整体故障。"], NORMALIZED, decision(c1="direct_observation"))
    assert problems == ["restates c2, a claim the evidence contradicts or that cites unverifiable evidence"]


def test_unsupported_claims_only_hedged() -> None:
    checks = decision(c1="direct_observation", c3="unsupported")
    assert check_claim_echo(["订单 123 支付失败并出现 ERR_TIMEOUT。"], NORMALIZED, checks)
    assert check_claim_echo(["“订单 123 支付失败并出现 ERR_TIMEOUT”缺少直接证据，尚未确认。"], NORMALIZED, checks) == []


def test_allowed_claims_short_texts_and_unrelated_sentences_pass() -> None:
    checks = decision(c1="direct_observation", c3="reasonable_inference")
    texts = ["已确认：pay-gateway 超时 5300ms。订单 123 支付失败并出现 ERR_TIMEOUT。短。", "订单 123"]
    assert check_claim_echo(texts, NORMALIZED, checks) == []


def test_near_verbatim_restatement_counts() -> None:
    checks = decision(c1="direct_observation", c3="external_unknown")
    assert check_claim_echo(["已确认订单123支付失败并出现ERR_TIMEOUT了"], NORMALIZED, checks)
