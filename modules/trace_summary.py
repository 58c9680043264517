"""V1 `tool_trace_summary`: the Verifier's evidence index, built from tool invocation facts only.

Pure and deterministic (no DSPy, no I/O). Rules from the V1 design:
- evidence tools only; auxiliary tools (clock, formatting) are left out;
- failed calls are kept, marked ``success=false`` and ``evidence_level=none``;
- each entry says in 1-3 sentences what the call proved or failed to prove, never the raw output;
- repeated calls of one tool on one topic in one round fold into one entry with repeat / miss / failure counts;
- when too long, entries are kept by priority: cited by the Executor output, backing a root cause, backing a
  fix, related to the retry gaps; then the rest in call order.
Every entry carries ``trace_ref`` and ``source_invocation_ids`` so facts can be traced back to tool_invocation rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from evigate.modules.evidence_view import TROUBLE
from evigate.rules import contract as field
from evigate.rules.text.words import bigram_overlap
from evigate.signatures import RetryContext, ToolInvocation, ToolTraceEntry

# Arguments that change how much is returned, not what is asked: calls differing only here are "repeats".
_NON_TOPIC_ARGS = frozenset({"limit", "top_k", "start", "end", "time_window"})
_EMPTY_OUTPUT = re.compile(r"^\s*(no rows|no results|no matching|未找到|无结果|0 rows)", re.IGNORECASE)
_INFORMATIVE_LINE = re.compile(
    r"ERR_|ERROR|WARN|timeout|超时|失败|\d+(\.\d+)?\s*(ms|s|%|秒)|HTTP\s*\d{3}", re.IGNORECASE
)
_SENTENCE_CHARS = 180


def build_tool_trace_summary(
    invocations: Iterable[ToolInvocation],
    executor_output: Mapping[str, Any] | None = None,
    retry_context: RetryContext | None = None,
    *,
    max_entries: int = 12,
) -> list[ToolTraceEntry]:
    """Summarise a session's evidence tool calls into at most ``max_entries`` traceable entries."""
    groups: dict[tuple[Any, ...], list[ToolInvocation]] = {}
    for invocation in sorted(invocations, key=lambda inv: inv.id):
        if invocation.is_evidence:
            groups.setdefault(_topic_key(invocation), []).append(invocation)
    entries = [_fold(members, index) for index, members in enumerate(groups.values(), start=1)]
    return truncate_trace_summary(entries, executor_output, retry_context, max_entries=max_entries)


def truncate_trace_summary(
    entries: list[ToolTraceEntry],
    executor_output: Mapping[str, Any] | None = None,
    retry_context: RetryContext | None = None,
    *,
    max_entries: int,
) -> list[ToolTraceEntry]:
    """At most ``max_entries`` of ``entries``, kept by the V1 priority (cited by the answer, root cause, fix, retry
    gaps) and shown in their original order."""
    if len(entries) <= max_entries:
        return entries
    ranked = sorted(entries, key=lambda entry: (*_priority(entry, executor_output, retry_context), _ref_number(entry)))
    kept = ranked[:max_entries]
    return sorted(kept, key=_ref_number)


def summarize_input(invocation: ToolInvocation) -> str:
    """`query_logs(order_id=123, error_code=ERR_TIMEOUT)` — a compact, stable rendering of the call."""
    args = ", ".join(
        f"{key}={_short(value, 60)}" for key, value in sorted(invocation.input.items()) if value not in (None, "")
    )
    return f"{invocation.tool_name}({args})"


def summarize_output(invocation: ToolInvocation) -> tuple[str, str]:
    """Return (1-3 sentence summary, evidence level) of one call."""
    if not invocation.success:
        reason = _short(invocation.error or invocation.output_preview or "unknown error", _SENTENCE_CHARS)
        return f"调用失败：{reason}。该调用不能证明任何事实。", "none"
    text = invocation.output_preview.strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or _EMPTY_OUTPUT.match(text):
        return "调用成功但未命中任何记录。", "none"
    # Lines that report trouble first (an ERROR log line, a threshold breach), then lines with values: a log page
    # whose first valued lines are routine INFO entries must not hide the timeout it was fetched for.
    trouble = [line for line in lines if TROUBLE.search(line)]
    valued = [line for line in lines if line not in trouble and _INFORMATIVE_LINE.search(line)]
    informative = trouble + valued or lines
    sentences = [f"返回 {len(lines)} 行结果"]
    sentences.extend(_short(line, _SENTENCE_CHARS) for line in informative[:2])
    level = "direct"
    documents = _retrieval_values(invocation.retrieval_details, ("source_documents", "document", "path", "source"))
    relevance = _retrieval_values(invocation.retrieval_details, ("relevance_levels", "relevance"))
    if documents:
        sentences[0] = f"命中 {', '.join(documents[:3])}"
        if relevance and "high" not in relevance:
            level = "indirect"
    return "；".join(sentences) + "。", level


def _fold(members: list[ToolInvocation], index: int) -> ToolTraceEntry:
    successes = [m for m in members if m.success and summarize_output(m)[1] != "none"]
    first = successes[0] if successes else members[0]
    summary, level = summarize_output(first)
    failures = sum(1 for m in members if not m.success)
    misses = sum(1 for m in members if m.success and summarize_output(m)[1] == "none")
    if len(members) > 1:
        summary += f"（同类调用 {len(members)} 次：{misses} 次未命中，{failures} 次失败）"
    details = [m.retrieval_details for m in members]
    return ToolTraceEntry(
        trace_ref=f"trace-{index}",
        tool_name=first.tool_name,
        success=bool(successes) or any(m.success for m in members),
        input_summary=summarize_input(first),
        output_summary=summary,
        evidence_level=level if successes else "none",
        source_invocation_ids=[m.id for m in members],
        query_samples=_unique(summarize_input(m) for m in members)[:3],
        retrieval_layers=_unique(v for d in details for v in _retrieval_values(d, ("retrieval_layers", "layer")))[:5],
        relevance_levels=_unique(v for d in details for v in _retrieval_values(d, ("relevance_levels", "relevance")))[
            :5
        ],
        source_documents=_unique(
            v for d in details for v in _retrieval_values(d, ("source_documents", "document", "path", "source"))
        )[:5],
        call_count=len(members),
        repeat_count=len(members) - 1,
        miss_count=misses,
        failure_count=failures,
    )


def _topic_key(invocation: ToolInvocation) -> tuple[Any, ...]:
    topic = {k: v for k, v in invocation.input.items() if k not in _NON_TOPIC_ARGS}
    return (invocation.tool_name, invocation.round, json.dumps(topic, sort_keys=True, ensure_ascii=False, default=str))


def _priority(
    entry: ToolTraceEntry, executor_output: Mapping[str, Any] | None, retry: RetryContext | None
) -> tuple[int, float]:
    """(V1 priority level, -closeness to the retry gaps): lower sorts first."""
    ids = set(entry.source_invocation_ids)
    cited, root, fix = _cited_ids(executor_output)
    if ids & cited:
        return (0 if ids & root else 1), 0.0
    if ids & fix:
        return 2, 0.0
    if retry and retry.missing_evidence_facts:
        text = entry.output_summary + entry.input_summary
        closeness = max(bigram_overlap(gap, text) for gap in retry.missing_evidence_facts)
        if closeness >= 0.3:
            return 3, -closeness
    return 4, 0.0


def _cited_ids(output: Mapping[str, Any] | None) -> tuple[set[int], set[int], set[int]]:
    cited: set[int] = set()
    root: set[int] = set()
    fix: set[int] = set()
    if not isinstance(output, Mapping):
        return cited, root, fix
    for claim in _dicts(output.get(field.CLAIMS)):
        ids = _binding_ids(claim.get(field.BINDINGS))
        cited |= ids
        if claim.get(field.CLAIM_TYPE) == "root_cause":
            root |= ids
        if claim.get(field.CLAIM_TYPE) == "remediation":
            fix |= ids
    for action in _dicts(output.get(field.ACTIONS)):
        fix |= _binding_ids(action.get(field.BINDINGS))
    return cited, root, fix


def _binding_ids(bindings: Any) -> set[int]:
    ids: set[int] = set()
    for binding in _dicts(bindings):
        for value in binding.get(field.INVOCATION_IDS) or []:
            if isinstance(value, int) and not isinstance(value, bool):
                ids.add(value)
    return ids


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _retrieval_values(details: Any, keys: tuple[str, ...]) -> list[str]:
    """Collect string values under any of ``keys`` from a dict, or from a list of hit dicts."""
    found: list[str] = []
    items = details if isinstance(details, list) else [details]
    for item in items:
        if not isinstance(item, Mapping):
            continue
        for key in keys:
            value = item.get(key)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, list):
                found.extend(str(v) for v in value if isinstance(v, str | int | float))
        for nested in ("hits", "results", "documents"):
            if isinstance(item.get(nested), list):
                found.extend(_retrieval_values(item[nested], keys))
    return _unique(found)


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _short(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ref_number(entry: ToolTraceEntry) -> int:
    return int(entry.trace_ref.rsplit("-", 1)[1])
