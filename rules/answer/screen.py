"""What the Composer input builder leaves out of an answer, and why: the audit's record of dropped user texts.

Every hypothesis, gap, action and claim that code keeps from the user is returned as a :class:`DroppedText` with its
reason (a Gatekeeper finding, a junk check of :mod:`evigate.rules.text.junk`, an off-topic claim), so the round that
writes the audit can record exactly what was not shown. Pure code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evigate.rules.answer.catalogue import FIXED_TEXTS, line_body
from evigate.rules.gate.actions import ITEM_TARGET
from evigate.rules.text.junk import junk_reason


@dataclass(frozen=True)
class DroppedText:
    """One text kept from the user: where it came from (``hypotheses[1]``, ``recommended_actions[0].reason``,
    ``claims[claim-2]``), what it said, and why it was not shown."""

    field: str
    text: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def screen(text: str, query: str) -> str | None:
    """Why ``text`` must not be shown (a repetition, filler, the question restated), or None.

    The session-free part of the junk checks: the Gatekeeper's ``action.junk_text`` also judges content-free items
    and ungrounded guesses against the session; this runs on everything code itself builds from the Executor's
    words (a gap quoting a claim, an overstated claim turned hypothesis, a reason)."""
    return junk_reason(text, query)


def gate_reasons(errors: Sequence[Any]) -> dict[tuple[str, int], str]:
    """(field, index) → the first Gatekeeper message targeting that hypothesis, action or gap."""
    reasons: dict[tuple[str, int], str] = {}
    for error in errors:
        target = getattr(error, "target", None)
        if target is None and isinstance(error, Mapping):
            target = error.get("target")
        match = ITEM_TARGET.match(target) if isinstance(target, str) else None
        if match is None:
            continue
        rule = getattr(error, "rule_id", None) or (error.get("rule_id") if isinstance(error, Mapping) else None)
        message = getattr(error, "message", None) or (error.get("message") if isinstance(error, Mapping) else "")
        reasons.setdefault((match.group(1), int(match.group(2))), f"{rule}: {message}" if rule else str(message))
    return reasons


def junk_lines(answer: str, query: str, session_text: str | None = None) -> list[tuple[str, str]]:
    """(line, reason) for every line of a rendered answer that is junk: what a benchmark's junk metric counts.

    Each line is judged without its bullet and without the catalogue's own prefixes ("待确认：", "Not yet
    confirmed: "); the catalogue's headings and fixed texts are never junk. ``session_text`` (the session's
    evidence, inputs and question) adds the content-free check."""
    found: list[tuple[str, str]] = []
    for raw in answer.splitlines():
        line = line_body(raw)
        if not line or line in FIXED_TEXTS:
            continue
        why = junk_reason(line, query, session_text)
        if why is not None:
            found.append((raw.strip(), why))
    return found
