"""The Executor's view of the evidence: verbatim lines, the ones that matter first, within budget."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evigate.modules.evidence_view import compact_output, focus_pattern, format_evidence, lead_first
from evigate.signatures import ToolInvocation

LOGS = "\n".join(
    [
        "query_logs order_id=123: 9 matching lines between 14:03:01 and 14:03:12",
        *[f"2026-11-28 14:03:0{i} INFO order-service order=123 step {i} ok padding padding padding" for i in range(6)],
        "2026-11-28 14:03:12 ERROR pay-gateway order=123 ERR_TIMEOUT upstream unionpay timeout after 5300ms",
        "2026-11-28 14:03:12 INFO order-service order=1234 unrelated",
    ]
)
METRICS = "\n".join(
    [
        "query_metrics pay-gateway latency_p99 (ms) 1440 points",
        "stats: min=364.8ms max=6470.9ms",
        "threshold > 2000ms: first breach 05:15",
        *[f"2026-11-28 {h:02d}:00..{h:02d}:29 latency_p99 avg=573.82ms max=865.1ms" for h in range(24)],
    ]
)


def test_short_outputs_are_shown_whole() -> None:
    assert compact_output("a\nb", 100) == "a\nb"


def test_the_line_naming_most_of_the_question_survives_a_tight_budget() -> None:
    shown = compact_output(LOGS, 260, focus_pattern(["123", "ERR_TIMEOUT"]))
    assert "upstream unionpay timeout after 5300ms" in shown
    assert shown.startswith("query_logs order_id=123")  # the summary line heads every view
    assert "lines omitted" in shown and len(shown) < len(LOGS)


def test_a_term_matches_whole_tokens_only() -> None:
    pattern = focus_pattern(["123"])
    assert pattern is not None and pattern.search("order=123 x") and not pattern.search("order=1234")
    assert focus_pattern(["", "  "]) is None


def test_ordinary_points_fill_at_most_half_the_budget() -> None:
    shown = compact_output(METRICS, 600)
    assert shown.splitlines()[:3] == METRICS.splitlines()[:3]
    ordinary = [line for line in shown.splitlines() if line.startswith("2026")]
    assert sum(len(line) + 1 for line in ordinary) <= 300


@given(st.lists(st.text(alphabet="ab 12\u4e2d", max_size=40), max_size=30), st.integers(20, 400))
def test_every_shown_line_is_verbatim_and_in_order(lines: list[str], budget: int) -> None:
    text = "\n".join(lines)
    shown = [line for line in compact_output(text, budget, focus_pattern(["12"])).splitlines()]
    originals = text.splitlines()
    position = 0
    for line in shown:
        if line.startswith("… (") and line.endswith("lines omitted)"):
            continue
        if line.endswith(" …"):  # a single over-long line cut to the budget
            assert any(original.startswith(line[:-2]) for original in originals)
            continue
        position = originals.index(line, position) + 1


def test_blocks_carry_id_tool_purpose_and_failures() -> None:
    ok = ToolInvocation(
        id=7, session_id="s", tool_name="query_order", input={"order_id": 123}, output_preview="order 123", success=True
    )
    failed = ToolInvocation(
        id=8, session_id="s", tool_name="query_logs", input={"service": "x"}, output_preview="", success=False
    )
    text = format_evidence([ok, failed], 500)
    assert text.startswith('[invocation 7 query_order] args={"order_id": 123}\norder 123')
    assert "[invocation 8 query_logs FAILED]" in text
    assert format_evidence([], 500) == "(no evidence collected)"


def test_arguments_are_left_out_when_the_output_restates_the_call() -> None:
    restating = ToolInvocation(
        id=9,
        session_id="s",
        tool_name="query_logs",
        input={"order_id": 123},
        output_preview="query_logs order_id=123: 1 matching line\n2026-11-28 14:03:12 ERROR pay-gateway ERR_TIMEOUT",
        success=True,
    )
    text = format_evidence([restating], 500)
    assert text.startswith("[invocation 9 query_logs]\n2026-11-28 14:03:12 ERROR pay-gateway ERR_TIMEOUT\n"
                           "query_logs order_id=123: 1 matching line")
    assert "args=" not in text


def test_the_decisive_line_is_shown_before_the_header_that_restates_the_call() -> None:
    """Measured on the 0.5B default: the Executor quoted the header line, which code can never confirm."""
    logs = ToolInvocation(id=3, session_id="s", tool_name="query_logs", input={"order_id": 123}, output_preview=LOGS)
    text = format_evidence([logs], 2000, focus_terms=["123", "ERR_TIMEOUT"])
    shown = text.splitlines()
    assert shown[1] == LOGS.splitlines()[7]  # the ERROR line naming both terms of the question
    assert shown[2] == LOGS.splitlines()[0] and sorted(shown[1:]) == sorted(LOGS.splitlines())
    metrics = ToolInvocation(id=4, session_id="s", tool_name="query_metrics", input={}, output_preview=METRICS)
    assert format_evidence([metrics], 5000).splitlines()[1].startswith("threshold > 2000ms: first breach")


def test_an_output_without_a_header_or_without_a_telling_line_keeps_its_order() -> None:
    plain = "query_order order 5 found\nstatus=PAID\namount=10"
    assert lead_first(plain, "query_order") == plain
    order = "order 123: status=FAILED error_code=ERR_TIMEOUT\nupdated_at=14:03"
    assert lead_first(order, "query_order", focus_pattern(["123"])) == order


def test_a_knowledge_documents_header_is_replaced_by_its_arguments() -> None:
    """Measured on the 0.5B default: the header "lookup_knowledge '…': 3 sections" was quoted as an excerpt."""
    preview = 'lookup_knowledge "ERR_TIMEOUT 超时": 1 section\n## ERR_TIMEOUT\n含义：调用上游超时。'
    kb = ToolInvocation(id=5, session_id="s", tool_name="lookup_knowledge", input={"query": "ERR_TIMEOUT 超时"},
                        output_preview=preview)
    text = format_evidence([kb], 500, focus_terms=["ERR_TIMEOUT"])
    assert text.startswith('[invocation 5 lookup_knowledge] args={"query": "ERR_TIMEOUT 超时"}\n## ERR_TIMEOUT')
    assert "1 section" not in text
