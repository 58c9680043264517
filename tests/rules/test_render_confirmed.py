"""Only what code or the Verifier found directly observed is listed as confirmed; an inference is shown apart."""

from __future__ import annotations

from evigate.rules import decide_verdict
from evigate.rules.answer.composer_input import build_composer_input
from evigate.rules.answer.render import render_deterministic
from evigate.signatures import ClaimCheck
from tests.rules.test_confirmation import LOG, ORDER, claim, output

INFERRED = "SLOW_SQL 索引失效 全表扫描"


def rendered(locale: str = "zh") -> tuple[object, str]:
    """Seen on the 0.5B default: a runbook-only symptom (capped to reasonable_inference) listed under 已确认信息."""
    data = output(claim(ORDER, ORDER, [1]), claim(INFERRED, "慢 SQL", [3], claim_id="claim-2"),
                  claim(LOG[20:], LOG[20:], [2], claim_id="claim-3"))
    checks = [ClaimCheck(claim_id="claim-1", verification="direct_observation"),
              ClaimCheck(claim_id="claim-2", verification="direct_observation"),  # capped: knowledge only
              ClaimCheck(claim_id="claim-3", verification="unsupported")]
    decision = decide_verdict(data, checks, None, "valid", {})
    ci = build_composer_input("SLOW_SQL 是什么原因？", data, None, decision)
    return ci, render_deterministic(ci, locale=locale)  # type: ignore[arg-type]


def test_allowed_claims_carry_what_code_decided_not_what_the_executor_wrote() -> None:
    ci, _ = rendered()
    assert [(c.claim_id, c.support_level) for c in ci.allowed_claims] == [("claim-1", "direct"),
                                                                          ("claim-2", "indirect")]


def test_an_inference_is_not_listed_under_confirmed_information() -> None:
    _, text = rendered()
    confirmed, rest = text.split("由证据推断（未直接观察到）：")
    assert ORDER in confirmed and INFERRED not in confirmed
    assert INFERRED in rest
    _, english = rendered("en")
    assert "Inferred from the evidence (not directly observed):" in english


def test_a_confirmed_line_naming_a_capitalised_pool_is_shown_not_dropped_as_foreign() -> None:
    """Measured (en, INC-03): "… HikariPool-1 - Connection is not available …" was dropped from 已确认信息, because
    the case-folded material never held "HikariPool" as written; the answer then said "(none)"."""
    line = ("2026-11-28 09:30:34 ERROR payment-service order=99330 ERR_DB_POOL_EXHAUSTED HikariPool-1 - Connection "
            "is not available, request timed out after 30000ms")
    data = output(claim(f"query_logs returned: {line}", line, [2]))
    decision = decide_verdict(data, [ClaimCheck(claim_id="claim-1", verification="direct_observation")], None,
                              "valid", {})
    ci = build_composer_input("Order 456 payment failed with ERR_DB_POOL_EXHAUSTED. Why?", data, None, decision)
    text = render_deterministic(ci, locale="en")  # type: ignore[arg-type]
    assert "HikariPool-1 - Connection is not available" in text and "(none)" not in text
