"""What this session's evidence calls observed, as opposed to what they were asked or what a runbook says.

Shared by the claim rules (``rules/verdict``: premise, relevance, confirmation) and the Gatekeeper's rules on what
users read (``action.junk_text``), so "observed" means one thing everywhere. Pure code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evigate.rules.gate.session import InvocationView, SessionIndex, flatten
from evigate.rules.text.normalize import compact, fold

KNOWLEDGE_TOOLS: tuple[str, ...] = ("lookup_knowledge",)
"""Tools whose output is a knowledge document (runbook, error-code catalogue), not an observation of the incident.
Any tool whose name contains "knowledge", "runbook" or "kb" is treated the same way."""
_KNOWLEDGE_NAME = re.compile(r"knowledge|runbook|(?:^|_)kb(?:_|$)|(?:^|_)docs?(?:_|$)", re.IGNORECASE)


def is_knowledge_tool(tool_name: str, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS) -> bool:
    """Whether a tool's output is a knowledge document rather than an observation of the incident."""
    return tool_name in set(knowledge_tools) or bool(_KNOWLEDGE_NAME.search(tool_name or ""))


def restates_header(text: str, views: Sequence[InvocationView]) -> bool:
    """Whether ``text`` restates the call: a tool's header line ("query_metrics payment-service …"), or the call's args.

    Measured on the 0.5B default: such a header, time range and point count included, confirmed as a symptom made a
    PASS that showed nothing about the incident. A header is the tool describing its own call, not a finding.
    """
    folded = fold(text).lstrip(" '\"“”‘’`「」")
    if any(folded.startswith(fold(view.tool_name)) for view in views):
        return True
    # Measured on the 0.5B default: the claim "ERR_SMS_PROVIDER 短信服务商 熔断" was lookup_knowledge's own query,
    # found in its header line. What the call's arguments already hold is what was asked, not what was returned.
    needle = compact(folded)
    return bool(needle) and any(view.input_core and needle in view.input_core for view in views)


def observed_text(views: Iterable[InvocationView]) -> str:
    """What the successful calls observed: their returned lines beyond their own header, and their details with the
    call's own argument values blanked out.

    Measured on dev: "query_logs … service=notification-service level=WARN: no rows" names the service it was asked
    about (``restates_header``), and its details carry the filters (``"service": "notification-service"``): neither
    observed anything about notification-service."""
    parts: list[str] = []
    for view in views:
        if not view.success:
            continue
        parts += returned_lines(view)
        details = view.raw_details or ""
        for value in _values(view.invocation.input):
            details = re.sub(rf"(?<![\w\-]){re.escape(value)}(?![\w\-])", " ", details, flags=re.IGNORECASE)
        parts.append(details)
    return "\n".join(part for part in parts if part.strip())


def returned_lines(view: InvocationView) -> list[str]:
    """The lines a call returned beyond its own header ("query_logs … service=pay-gateway: no rows" is only that)."""
    return [line for line in (view.raw_preview or "").splitlines()
            if line.strip() and not restates_header(line, [view])]


def _values(value: Any) -> list[str]:
    """The scalar argument values of a call, longest first (one never blanks part of a longer one)."""
    if isinstance(value, Mapping):
        found = [item for inner in value.values() for item in _values(inner)]
    elif isinstance(value, list | tuple):
        found = [item for inner in value for item in _values(inner)]
    else:
        found = [str(value).strip()] if value is not None and str(value).strip() else []
    return sorted(set(found), key=len, reverse=True)


def evidence_text(session: SessionIndex, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS) -> str:
    """What this session's evidence calls that observed anything were asked and returned (never a knowledge document,
    never a call that came back empty): the entities an answer's directions, gaps and steps may be about.

    A call observed something when it returned a line beyond its header; its retrieval details do not count (measured
    on dev: an empty query_logs call's details still read ``{"matched": 0, "returned": 0, "filters": …}``)."""
    knowledge = tuple(knowledge_tools)
    parts: list[str] = []
    for view in session.in_session:
        if (not view.success or not view.invocation.is_evidence or is_knowledge_tool(view.tool_name, knowledge)
                or not returned_lines(view)):
            continue
        parts += [view.raw_preview or "", view.raw_details or "", flatten(view.invocation.input or {})]
    return "\n".join(part for part in parts if part)
