"""The Gatekeeper records where each accepted binding's excerpt sits in the whole stored output (issue 20).

The Trace Workbench highlights these spans, so they must be the gate's own match, indexed in the invocation's
whole output (not the capped preview), and absent for bindings a fail-level rule rejected.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import Gatekeeper
from evigate.rules.text.normalize import locate_excerpt
from evigate.signatures import ToolInvocation
from evigate.store import make_preview

HEAD = "2024-05-01 10:05:00 INFO [pay-gateway] started\n" * 60
LINE = "2024-05-01 10:05:16.480 WARN [pay-gateway] upstream bank-channel slow, elapsed 5210ms"
WHOLE = HEAD + LINE + "\n" + "2024-05-01 10:06:00 INFO [pay-gateway] ok\n" * 40


def _validate(invocations: list[ToolInvocation], excerpt: str, ids: list[int], claim: str = "上游 bank-channel 响应慢"):
    data = {
        "answer_version": "executor_evidence_v2",
        "claims": [{
            "claim_id": "c1", "claim_type": "symptom", "claim_text": claim, "support_level": "direct",
            "evidence_bindings": [{"source_type": "tool_trace", "source_id": None, "tool_name": "query_logs",
                                   "source_invocation_ids": ids, "evidence_excerpt": excerpt}],
        }],
    }
    return Gatekeeper.default().validate(data, invocations, "s")


def _logs(invocation_id: int = 7, whole: str = WHOLE, preview_chars: int = 500) -> ToolInvocation:
    preview = make_preview(whole, preview_chars)
    return ToolInvocation(id=invocation_id, session_id="s", tool_name="query_logs", output_preview=preview,
                          output=whole if preview != whole else None)


def test_a_verbatim_excerpt_past_the_preview_is_located_in_the_whole_output() -> None:
    outcome = _validate([_logs()], LINE, [7])
    assert [e for e in outcome.result.errors if e.level == "fail"] == []
    [span] = outcome.spans
    assert (span.claim_id, span.target, span.invocation_id, span.match) == (
        "c1", "claims[0].evidence_bindings[0]", 7, "verbatim")
    assert span.start > 500  # past the preview: offsets index the whole output
    assert WHOLE[span.start:span.end] == LINE


def test_a_lightly_edited_excerpt_gets_the_aligned_window_of_the_similarity_rule() -> None:
    edited = LINE.replace("upstream", "Upstream").replace(", elapsed", " elapsed")
    outcome = _validate([_logs()], edited, [7])
    [span] = outcome.spans
    assert span.match == "aligned" and 0.6 <= span.score < 1.0
    assert "bank-channel slow" in WHOLE[span.start:span.end]


def test_a_stitched_excerpt_gets_one_span_per_segment() -> None:
    outcome = _validate([_logs()], "[pay-gateway] upstream bank-channel slow … elapsed 5210ms", [7])
    texts = [WHOLE[span.start:span.end] for span in outcome.spans]
    assert texts == ["pay-gateway] upstream bank-channel slow", "elapsed 5210ms"]  # segments lose edge punctuation


def test_a_misattributed_binding_is_not_accepted_and_gets_no_span() -> None:
    other = ToolInvocation(id=8, session_id="s", tool_name="query_metrics",
                           output_preview="cpu_usage{service=order-db} 92% at 10:05, connections 480/500")
    outcome = _validate([_logs(), other], LINE, [8])
    assert any(e.target.startswith("claims[0].evidence_bindings[0]") and e.level == "fail"
               for e in outcome.result.errors)
    assert outcome.spans == []


def test_a_forged_invocation_id_gets_no_span() -> None:
    outcome = _validate([_logs()], LINE, [999])
    assert outcome.spans == []


def test_spans_never_change_the_findings() -> None:
    """The spans are computed after the rules: the same data gives the same result with or without a viewer."""
    first = _validate([_logs()], LINE, [7])
    second = _validate([_logs()], LINE, [7])
    assert first.result == second.result and first.spans == second.spans


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=120), st.text(min_size=1, max_size=60), st.text(max_size=60))
def test_located_spans_lie_inside_the_haystack_and_a_verbatim_one_is_the_excerpt(
    before: str, excerpt: str, after: str
) -> None:
    haystack = before + excerpt + after
    spans = locate_excerpt(excerpt, haystack)
    for start, end, score in spans:
        assert 0 <= start <= end <= len(haystack) and 0.0 <= score <= 1.0
    if excerpt.strip():
        start, end, score = spans[0]
        assert score == 1.0 and haystack[start:end] == excerpt.strip()
