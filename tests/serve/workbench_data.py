"""A recorded session whose tool output, question, claims and answer carry planted markup (issue 20's XSS cases).

The session is written through the store's public API and judged by the real Gatekeeper, so the page shows what a
real audit holds: an attacker-controlled log line with a ``<script>``, an ``onerror=`` attribute and a
``javascript:`` link, quoted by a claim whose binding the gate accepted (with its span) and one it rejected.
"""

from __future__ import annotations

from typing import Any

from evigate.rules import Gatekeeper
from evigate.signatures import ClaimCheck, VerifierEvaluation
from evigate.store import AuditStore

SCRIPT = "<script>window.__pwned = 'script'</script>"
ONERROR = '<img src=x onerror="window.__pwned = \'onerror\'">'
JS_LINK = '<a href="javascript:window.__pwned = \'link\'">details</a>'
LINES = [
    f"2026-11-28 14:03:10 ERROR pay-gateway order=123 {SCRIPT}",
    f"2026-11-28 14:03:11 ERROR pay-gateway order=123 {ONERROR}",
    f"2026-11-28 14:03:12 ERROR pay-gateway order=123 {JS_LINK}",
    "2026-11-28 14:03:13 ERROR pay-gateway order=123 ERR_TIMEOUT upstream unionpay timeout after 5300ms 😀",
]
# A leading newline and CRLF lines before the quoted ones: what an HTML parser drops or folds must not shift a span.
LOG = "\n" + "\r\n".join(["2026-11-28 14:03:00 INFO pay-gateway 服务启动 🚀"] * 30) + "\n" + "\n".join(LINES) + "\n"


def _claim(claim_id: str, text: str, excerpt: str, ids: list[int], tool: str = "query_logs") -> dict[str, Any]:
    return {"claim_id": claim_id, "claim_type": "symptom", "claim_text": text, "support_level": "direct",
            "evidence_bindings": [{"source_type": "tool_trace", "tool_name": tool,
                                   "source_invocation_ids": ids, "evidence_excerpt": excerpt}]}


def planted_session(store: AuditStore) -> dict[str, Any]:
    """Record the session; returns its id, the invocation ids and the claims (for the tests' expectations)."""
    session_id = store.start_session(f"为什么 order 123 失败？{SCRIPT}", settings={"locale": "zh", "domain": "demo"})
    logs = store.record_invocation(session_id, 1, "query_logs", {"service": "pay-gateway", "q": ONERROR}, LOG,
                                   latency_ms=12.5, preview_chars=400)
    other = store.record_invocation(session_id, 1, "query_metrics", {"metric": "cpu"},
                                    "cpu_usage{service=order-db} 92% at 14:03, connections 480/500", latency_ms=3.0)
    claims = [
        _claim("c1", f"pay-gateway 日志 {ONERROR}", LINES[1], [logs.id]),
        _claim("c2", "pay-gateway 调用 unionpay 超时 5300ms", LINES[3], [logs.id]),
        # misattributed: the line is the logs', cited from the metrics call
        _claim("c3", f"order-db 负载 {JS_LINK}", LINES[3], [other.id], "query_metrics"),
        _claim("c4", "订单 123 的网关报错", LINES[0], [999_999]),  # forged: no such invocation
    ]
    data = {"answer_version": "executor_evidence_v2", "claims": claims}
    gate = Gatekeeper.default().validate(data, store.invocations(session_id), session_id)
    checks = [ClaimCheck(claim_id="c1", verification="direct_observation", detail=f"quoted {SCRIPT}"),
              ClaimCheck(claim_id="c2", verification="direct_observation", detail="quoted"),
              ClaimCheck(claim_id="c3", verification="unsupported", detail="misattributed"),
              ClaimCheck(claim_id="c4", verification="unsupported", detail="forged")]
    evaluation = VerifierEvaluation(
        verdict="LOW_CONFID", groundedness_score=0.5, claim_checks=checks, executor_structured_output=gate.normalized,
        gatekeeper_result=gate.result, binding_spans=gate.spans, output_type="LOW_CONFID_WITH_DISCLAIMER",
        reasons=[f"planted reason {JS_LINK}"],
        code_confirmation={"label_sources": {"c1": "code", "c2": "model"}, "capped": {}, "rewritten": []},
    )
    store.merge_self_evaluation(session_id, "verifier_evaluation", evaluation.model_dump(mode="json"))
    answer = f"pay-gateway 日志 {ONERROR}。pay-gateway 调用 unionpay 超时 5300ms。{JS_LINK}"
    store.finish_session(session_id, output_type="LOW_CONFID_WITH_DISCLAIMER", verdict="LOW_CONFID", answer=answer,
                         rounds=1, groundedness_score=0.5)
    return {"session_id": session_id, "logs": logs.id, "other": other.id, "claims": claims, "spans": gate.spans,
            "errors": gate.result.errors}
