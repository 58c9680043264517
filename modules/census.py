"""Error-code census: when a question names no error code, the evidence names the candidates (issue 18).

Operators ask by symptom, service and time ("下午四点半以后 api-gateway 大量返回 429") far more often than by code.
Before choosing a runbook, the Planner counts the error codes of the records the question points at — its service,
its record handles (order, trace …) and its time window — with the domain's census tool (``Domain.census_tool``: a
registry tool whose output's ``retrieval_details`` carry ``by_error_code: {code: count}``, as the demo's
``query_logs`` does). The most frequent code that exactly one skill lists decides the skill, and fills
``{error_code}`` in its steps; when the question named no time, the span of that code's records in the same
selection fills ``{time_window}``. A question that names neither a handle nor a time gets no census: a whole-day
count names the day's loudest code, not the question's.

The census only chooses which evidence to collect. Its calls are not evidence: the skill's steps that it fills are
what the Executor runs and the audit records, and every claim is judged against those.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

logger = logging.getLogger(__name__)

SPAN_MARGIN = timedelta(minutes=5)
"""How far the window a census finds reaches beyond the first and last record of the code."""
MIN_BURST = 10
"""Records of one code a service or time selection must hold for the code to count as what happened there: an
incident is a burst, while every hour of a busy system holds a few failures of its own (on the train split, the
incident codes counted 22-430 in their selections, background codes in quiet hours 1-4). A selection by a record
handle (an order, a trace) needs only one: the record itself is what was asked about."""


@dataclass(frozen=True)
class Candidate:
    """An error code the evidence named, the skill that owns it, and the window of its records (if looked up)."""

    code: str
    count: int
    skill: Any
    counts: Mapping[str, int]
    time_window: str | None = None
    widened: bool = False
    """Found only once the selection was widened to the window alone, and none of its records names the question's
    handle: the window's code, not the question's. It may still choose the runbook, but it is no anchor of the
    question (``Plan.evidence_named``)."""

    def rationale(self) -> str:
        shown = "，".join(f"{code}={count}" for code, count in list(self.counts.items())[:4])
        return f"问题未给出错误码；所问范围内的日志按错误码统计为 {shown}，{self.code} 最多且只由该 skill 处理"


def census_filters(tool: Any, entities: Mapping[str, Any], handles: Sequence[str]) -> dict[str, Any]:
    """The census tool's arguments the question fills: its first value of each handle and its window."""
    fields = set(tool.Args.model_fields)
    filters: dict[str, Any] = {}
    for key in handles:
        name = key[:-1] if key.endswith("s") else key  # services → service, order_ids → order_id
        values = entities.get(key) or []
        if name in fields and values:
            filters[name] = values[0]
    if "time_window" in fields and entities.get("time_window"):
        filters["time_window"] = entities["time_window"]
    return filters


def _counts(tool: Any, source: Any, filters: Mapping[str, Any], lines: int = 1
            ) -> tuple[dict[str, int], dict[str, Any], str]:
    """(counts by error code, the output's details, its text) of one census call showing ``lines`` records."""
    args = dict(filters)
    if "limit" in tool.Args.model_fields:
        args["limit"] = lines  # mostly only the counts are wanted
    try:
        output = tool.run(tool.Args(**args), source)
    except Exception as exc:  # a census is an aid to planning: without it the planner chooses as before
        logger.warning("error-code census %s(%s) failed: %s", tool.name, args, exc)
        return {}, {}, ""
    details = output.retrieval_details if isinstance(output.retrieval_details, dict) else {}
    counts = details.get("by_error_code") or {}
    return {str(code): int(n) for code, n in counts.items() if code and code != "-"}, details, output.text


def code_count(tool: Any, source: Any, filters: Mapping[str, Any], code: str) -> int:
    """Records of ``code`` in the selection ``filters`` (0 when the census tool cannot filter by code or fails)."""
    if "error_code" not in tool.Args.model_fields:
        return 0
    counts, _, _ = _counts(tool, source, {**filters, "error_code": code})
    return counts.get(code, 0)


def _span(details: Mapping[str, Any]) -> str | None:
    try:
        first = datetime.fromisoformat(str(details["first_ts"]))
        last = datetime.fromisoformat(str(details["last_ts"]))
    except (KeyError, ValueError):
        return None
    return f"{first - SPAN_MARGIN:%Y-%m-%d %H:%M}/{last + SPAN_MARGIN:%Y-%m-%d %H:%M}"


LINK_LINES = 20
"""Records of a widened code read to see whether they name the question's handle."""


def _names_handle(tool: Any, source: Any, selection: Mapping[str, Any], code: str,
                  filters: Mapping[str, Any]) -> bool:
    """Whether the records of ``code`` in the widened selection name one of the question's handles (the order-service
    line "ERR_UPSTREAM_TIMEOUT call product-service … timeout" for a question about product-service): then the code is
    the question's after all, logged by a neighbour."""
    if "error_code" not in tool.Args.model_fields:
        return False
    _, _, text = _counts(tool, source, {**selection, "error_code": code}, lines=LINK_LINES)
    folded = text.casefold()
    handles = [str(value).casefold() for key, value in filters.items() if key != "time_window"]
    return any(handle and handle in folded for handle in handles)


def error_census(
    tool: Any, source: Any, entities: Mapping[str, Any], handles: Sequence[str], owners: Any,
) -> Candidate | None:
    """The candidate the evidence names for this question (see the module docstring), or None.

    ``owners(code)`` lists the skills whose text names ``code``. With a handle and a window, a selection without any
    owned code is widened to the window alone (an incident's codes are often logged by a neighbouring service).
    """
    filters = census_filters(tool, entities, handles)
    named_window = "time_window" in filters
    services = {"service", "services"}
    by_record = any(key not in services and key[:-1] in filters for key in handles)
    attempts = [filters]
    if named_window and len(filters) > 1:
        attempts.append({"time_window": filters["time_window"]})
    for selection in attempts:
        if not selection:
            continue
        counts, _, _ = _counts(tool, source, selection)
        ranked = dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
        least = 1 if by_record and selection is filters else MIN_BURST
        for code, count in ranked.items():
            found = owners(code)
            if len(found) != 1 or count < least:
                continue
            window = None
            if not named_window and "error_code" in tool.Args.model_fields:
                _, details, _ = _counts(tool, source, {**selection, "error_code": code})
                window = _span(details)
            widened = selection is not filters and not _names_handle(tool, source, selection, code, filters)
            return Candidate(code, count, found[0], ranked, window, widened=widened)
    return None
