"""What the Executor model reads: recorded tool outputs, cut to the lines that matter for this question.

Prompt evaluation dominates a small local model's time (~80 prompt tokens/s on one core), and a metrics output of
1,440 points or a log page of 30 lines is mostly lines no claim will cite. Each output keeps its opening lines (the
tools put totals, stats and threshold breaches there), then the lines that name something the user asked about
(an identifier, error code or service of the domain's vocabulary), then the rest in order while the budget lasts.
Lines are kept verbatim, so an excerpt copied from this view is an excerpt of the recorded output; only the
Gatekeeper's comparison against the full recorded output decides whether it matches. Pure: no I/O, no DSPy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from evigate.domain import Domain, load_domain
from evigate.rules.verdict.confirmation import is_knowledge_tool
from evigate.signatures import ToolInvocation


def step_key(tool: str, args: Mapping[str, object]) -> str:
    """Identity of a tool call, used to avoid repeating finished retrieval in round 2."""
    shown = {k: v for k, v in sorted(args.items()) if v not in (None, "")}
    return f"{tool}({json.dumps(shown, ensure_ascii=False, sort_keys=True, default=str)})"


def query_entities(query: str, domain: Domain | Any = None) -> dict[str, list[str]]:
    """The query's non-empty entity lists (error_codes, services, the domain's identifiers …) as strings, by the
    domain's vocabulary (default: the default domain)."""
    entities: dict[str, list[str]] = {}
    for key, value in load_domain(domain).extract_entities(query).items():
        values = value if isinstance(value, list | tuple | set) else [value]
        kept = [str(v) for v in values if v not in (None, "")]
        if kept:
            entities[key] = kept
    return entities


HEAD_LINES = 3
"""At most this many opening lines are always kept: tools write their summary, stats and threshold breaches first.
The head ends at the first timestamped line: from there on it is records (log lines, metric points), ranked."""

_RECORD = re.compile(r"^\s*\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}")


def focus_pattern(terms: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern matching any term as a whole token (``123`` must not match inside ``2026-11-28 14:03:12 3``)."""
    cleaned = sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True)
    if not cleaned:
        return None
    alternatives = "|".join(re.escape(term) for term in cleaned)
    return re.compile(rf"(?<![0-9A-Za-z_])(?:{alternatives})(?![0-9A-Za-z_])")


def compact_output(text: str, max_chars: int, focus: re.Pattern[str] | None = None) -> str:
    """``text`` within ``max_chars``, omissions marked.

    Kept, in this priority: the opening lines; lines naming the most distinct focus terms, then lines carrying an
    incident signal (ERROR, WARN, timeout, 失败 …); other lines only while under half the budget, so a long series
    of ordinary metric points does not crowd out the next tool's output. Shown in their original order.
    """
    if len(text) <= max_chars:
        return text
    lines = text.splitlines()
    head: list[int] = []
    for index, line in enumerate(lines[:HEAD_LINES]):
        if _RECORD.match(line):
            break
        head.append(index)
    rest = list(range(len(head), len(lines)))
    ranked = sorted(rest, key=lambda i: (-_focus_hits(lines[i], focus), -bool(TROUBLE.search(lines[i])), i))
    kept: set[int] = set()
    used = 0
    for index in head + ranked:
        line = lines[index]
        important = index in head or _focus_hits(line, focus) > 0 or bool(TROUBLE.search(line))
        budget = max_chars if important else max_chars // 2
        if used + len(line) + 1 > budget:
            if not kept:  # one very long first line: keep its start rather than nothing
                lines[index] = line[: max(0, max_chars - 2)] + " …"
                kept.add(index)
                used = max_chars
            continue
        kept.add(index)
        used += len(line) + 1
    shown: list[str] = []
    skipped = 0
    for index, line in enumerate(lines):
        if index in kept:
            if skipped:
                shown.append(f"… ({skipped} lines omitted)")
                skipped = 0
            shown.append(line)
        else:
            skipped += 1
    if skipped:
        shown.append(f"… ({skipped} lines omitted)")
    return "\n".join(shown)


TROUBLE = re.compile(r"ERR_|ERROR|WARN|FAIL|timeout|exhaust|deadlock|breach|超时|失败|异常|耗尽", re.IGNORECASE)
"""Words with which logs, metrics and runbooks mark trouble: a line carrying one is worth more than an ordinary one
(here and in the Verifier's trace summaries)."""


def lead_first(text: str, tool_name: str, focus: re.Pattern[str] | None = None) -> str:
    """``text`` with its most telling line moved before the header line that restates the call.

    Measured on the 0.5B default: the Executor quotes the first line after ``[invocation N tool]``. When that line is
    the tool describing its own call ("query_logs service=… : 60 matching lines …"), code can confirm nothing from
    it (a header is no finding). The line naming the most focus terms, else the first incident-signal line (ERROR,
    breach, timeout …), is shown first instead. Lines stay verbatim, so a one-line excerpt still matches the recorded
    output; an output with no such line, or whose first line is no header, is returned unchanged.
    """
    lines = text.splitlines()
    if len(lines) < 2 or not lines[0].startswith(tool_name):
        return text
    scored = [(_focus_hits(line, focus), bool(TROUBLE.search(line)), -index) for index, line in enumerate(lines)]
    best = max(range(1, len(lines)), key=lambda index: scored[index])
    if scored[best][:2] == (0, False):
        return text
    return "\n".join([lines[best], *lines[:best], *lines[best + 1:]])


def _focus_hits(line: str, focus: re.Pattern[str] | None) -> int:
    return len(set(focus.findall(line))) if focus is not None else 0


def format_evidence(invocations: list[ToolInvocation], max_chars: int, *, focus_terms: Iterable[str] = ()) -> str:
    """Evidence calls as ``[invocation N tool]`` + arguments + the compacted output, failures marked.

    The arguments are left out when the output's first line restates the call (``query_logs order_id=123: …``):
    every prompt token costs the local model time.

    Only tool output follows a header: showing the plan step's purpose there was measured to be copied by the 0.5B
    default as if it were an excerpt.
    """
    focus = focus_pattern(focus_terms)
    blocks = []
    for inv in invocations:
        if not inv.is_evidence:
            continue
        status = "" if inv.success else " FAILED"
        body = inv.output_preview if inv.success else (inv.error or inv.output_preview)
        header = f"[invocation {inv.id} {inv.tool_name}{status}]"
        restating = body.startswith(inv.tool_name)
        if restating and inv.success and is_knowledge_tool(inv.tool_name) and "\n" in body:
            # Measured on the 0.5B default: it quoted lookup_knowledge's header ("lookup_knowledge '…': 3 sections")
            # in 3 of 7 demo questions. That line only repeats the query, so the args line says it instead.
            body, restating = body.split("\n", 1)[1], False
        if not restating:  # outputs that open by restating their query need no args line
            header += f" args={json.dumps(inv.input, ensure_ascii=False, default=str)}"
        elif inv.success:
            body = lead_first(body, inv.tool_name, focus)
        blocks.append(f"{header}\n{compact_output(body, max_chars, focus)}")
    return "\n\n".join(blocks) if blocks else "(no evidence collected)"
