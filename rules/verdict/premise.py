"""The user's premise written back as a finding: a claim made of the question's own pieces (issue 18).

Measured on dev with the 0.5B default: "2 pm payment timeouts caused by the connection pool filling up" for "Were
the 2 pm payment timeouts caused by the connection pool filling up?" (the user's wrong guess), and "API gateway
throttling orders after 4:30 pm" for "Why did the API gateway start throttling orders after 4:30 pm?", which the
Verifier model then called observed: a NORMAL answer whose only confirmed fact was the question. The question's
words are in the session, so every check that a claim's words occur somewhere passes.

A claim that echoes the question (``echoes``: most of it is the question's pieces) stands only when what it cites
shows every id, code, service, time and count it names ("订单 123 支付失败，错误码 ERR_TIMEOUT", cited from the order
record that holds 123 and ERR_TIMEOUT, confirms the user's report). Otherwise — it names nothing a tool returned, or
something only the question says — it is the question restated: code rewrites it into what it cites
(``rewrite_junk_claims``), it never counts as quoting an output (``add_anchor_observations``), and it is never
confirmed (``off_topic_claims``). Pure code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evigate.rules.contract import binding_ids, claim_text, iter_bindings
from evigate.rules.gate.session import InvocationView, SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.junk import echoes
from evigate.rules.verdict.confirmation import restates_header

PREMISE_WHY = "the claim text restates the user's question, and what it cites does not show all it names"


def premise_reason(claim: Mapping[str, Any], session: SessionIndex, query: str) -> str | None:
    """``PREMISE_WHY`` when the claim is the question restated (see the module docstring), else None."""
    text = claim_text(claim)
    if not query.strip() or not text.strip() or not echoes(text, query):
        return None
    named = [entity for entity in extract_entities(text) if entity.is_key_value]
    cited = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))]
    returned = observed_lines(cited)
    if named and all(any(entity_occurs(entity, line) for line in returned) for entity in named):
        return None
    return PREMISE_WHY


def observed_lines(views: Iterable[InvocationView]) -> list[str]:
    """The lines the successful calls returned beyond their own header: what they observed.

    Measured on dev: "query_logs … service=notification-service level=WARN: no rows" names the service it was asked
    about and observed nothing; a claim naming that service is not shown by it (``restates_header``)."""
    return [line for view in views if view.success for part in (view.raw_preview, view.raw_details) if part
            for line in part.splitlines() if line.strip() and not restates_header(line, [view])]
