"""build_tool_trace_summary follows the V1 rules: evidence only, failures kept, folding, priority truncation."""

from __future__ import annotations

from evigate.modules import build_tool_trace_summary
from evigate.signatures import RetryContext, ToolInvocation


def inv(
    id_: int,
    tool: str,
    output: str = "",
    *,
    round_: int = 1,
    success: bool = True,
    evidence: bool = True,
    **args: object,
) -> ToolInvocation:
    return ToolInvocation(
        id=id_,
        session_id="s",
        tool_name=tool,
        input=dict(args),
        output_preview=output,
        success=success,
        round=round_,
        is_evidence=evidence,
        error=None if success else "log service timed out",
    )


def test_auxiliary_tools_are_left_out_and_failures_kept_as_no_evidence() -> None:
    entries = build_tool_trace_summary(
        [
            inv(1, "get_current_datetime", "2026-11-28 23:59:59", evidence=False),
            inv(2, "query_logs", success=False, order_id=123),
            inv(3, "query_order", "order 123: status=FAILED error_code=ERR_TIMEOUT", order_id=123),
        ]
    )
    assert [e.tool_name for e in entries] == ["query_logs", "query_order"]
    failed, order = entries
    assert (failed.success, failed.evidence_level, failed.source_invocation_ids) == (False, "none", [2])
    assert "timed out" in failed.output_summary
    assert order.evidence_level == "direct" and "ERR_TIMEOUT" in order.output_summary
    assert [e.trace_ref for e in entries] == ["trace-1", "trace-2"]


def test_summaries_are_short_and_never_the_raw_output() -> None:
    output = "\n".join(f"2026-11-28 14:{i:02d}:00 INFO svc line {i}" for i in range(500))
    entry = build_tool_trace_summary([inv(1, "query_logs", output, service="svc")])[0]
    assert len(entry.output_summary) < 500 and entry.output_summary.startswith("返回 500 行结果")


def test_repeated_calls_on_one_topic_fold_with_counts() -> None:
    entries = build_tool_trace_summary(
        [
            inv(1, "query_logs", "no rows", order_id=123, limit=10),
            inv(2, "query_logs", "2026-11-28 ERROR pay-gateway ERR_TIMEOUT after 5300ms", order_id=123, limit=50),
            inv(3, "query_logs", success=False, order_id=123, limit=100),
            inv(4, "query_logs", "x", order_id=123, round_=2),  # another round: its own entry
        ]
    )
    assert len(entries) == 2
    folded = entries[0]
    assert folded.source_invocation_ids == [1, 2, 3] and folded.call_count == 3
    assert (folded.repeat_count, folded.miss_count, folded.failure_count) == (2, 1, 1)
    assert "5300ms" in folded.output_summary  # the first effective hit is what the entry shows


def test_knowledge_hits_carry_documents_layers_and_relevance() -> None:
    details = {
        "retrieval_layers": ["exact_error_code"],
        "relevance_levels": ["medium"],
        "source_documents": ["payment/errors.md"],
    }
    entry = build_tool_trace_summary(
        [
            ToolInvocation(
                id=9,
                session_id="s",
                tool_name="lookup_knowledge",
                input={"query": "ERR_TIMEOUT"},
                output_preview="[1] payment/errors.md § ERR_TIMEOUT",
                retrieval_details=details,
            )
        ]
    )[0]
    assert entry.source_documents == ["payment/errors.md"] and entry.retrieval_layers == ["exact_error_code"]
    assert entry.evidence_level == "indirect"  # only medium relevance: not a direct anchor


def test_truncation_keeps_cited_root_cause_fix_and_gap_evidence_first() -> None:
    invocations = [inv(i, "query_metrics", f"metric {i} value={i}ms", service=f"svc-{i}") for i in range(1, 21)]
    executor_output = {
        "claims": [
            {"claim_type": "root_cause", "evidence_bindings": [{"source_invocation_ids": [17]}]},
            {"claim_type": "symptom", "evidence_bindings": [{"source_invocation_ids": [12]}]},
        ],
        "recommended_actions": [{"evidence_bindings": [{"source_invocation_ids": [15]}]}],
    }
    retry = RetryContext(missing_evidence_facts=["metric 19 value"])
    entries = build_tool_trace_summary(invocations, executor_output, retry, max_entries=5)
    kept = [e.source_invocation_ids[0] for e in entries]
    assert {17, 12, 15, 19} <= set(kept) and len(kept) == 5
    assert kept == sorted(kept)  # kept entries stay in call order


def test_a_summary_shows_the_trouble_a_log_page_holds_before_routine_lines() -> None:
    page = "\n".join(
        [
            "query_logs order_id=123: 4 matching lines",
            "2026-11-28 14:03:01 INFO api-gateway order=123 POST /api/v1/orders status=200 latency=153ms",
            "2026-11-28 14:03:02 INFO risk-service order=123 risk check passed latency=12ms",
            "2026-11-28 14:03:12 ERROR pay-gateway order=123 ERR_TIMEOUT upstream timeout after 5300ms",
        ]
    )
    (entry,) = build_tool_trace_summary([inv(1, "query_logs", page, order_id=123)])
    assert "upstream timeout after 5300ms" in entry.output_summary
    assert "risk check passed" not in entry.output_summary
