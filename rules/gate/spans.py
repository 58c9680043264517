"""Where the Gatekeeper found each binding it accepted: spans in the cited invocations' whole outputs.

A viewer (the Trace Workbench) highlights these spans, so what a person sees is the gate's own match and not a
guess made again in the browser. Computed after the rules ran and only from what they saw; nothing here changes a
finding or a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.rules.contract import claim_key, excerpt_of, iter_bindings, iter_claims
from evigate.rules.gate.base import RuleContext
from evigate.rules.gate.evidence import cited_views
from evigate.rules.text.normalize import locate_excerpt
from evigate.signatures import BindingSpan, GatekeeperError

_BINDING_TARGET = re.compile(r"^(claims\[\d+\]\.evidence_bindings\[\d+\])")
MAX_SPANS = 500
"""The audit keeps at most this many spans (like MAX_ERRORS, the record stays light)."""


def rejected_bindings(errors: Iterable[GatekeeperError]) -> set[str]:
    """The binding paths (``claims[i].evidence_bindings[j]``) a fail-level finding targets."""
    rejected: set[str] = set()
    for error in errors:
        match = _BINDING_TARGET.match(error.target)
        if match and error.level == "fail":
            rejected.add(match.group(1))
    return rejected


def matched_spans(context: RuleContext, errors: Iterable[GatekeeperError]) -> list[BindingSpan]:
    """A span per accepted binding and cited invocation whose output holds its excerpt (or an aligned window).

    Accepted: the binding has an excerpt, cites at least one invocation of this session, and no fail-level finding
    targets it. Offsets index the invocation's whole stored output: the view's text is the whole output (or the
    preview where nothing was cut) without a truncation marker, which is always a prefix of what the store kept.
    """
    rejected = rejected_bindings(errors)
    spans: list[BindingSpan] = []
    for claim_index, claim in iter_claims(context.data):
        claim_id = claim_key(claim, claim_index)
        for binding_index, binding in iter_bindings(claim):
            target = f"claims[{claim_index}].evidence_bindings[{binding_index}]"
            excerpt = excerpt_of(binding)
            if target in rejected or not excerpt.strip():
                continue
            for view in cited_views(context, binding):
                for start, end, score in locate_excerpt(excerpt, view.raw_preview):
                    spans.append(BindingSpan(
                        claim_id=claim_id, target=target, invocation_id=view.id, start=start, end=end,
                        match="verbatim" if score >= 1.0 else "aligned", score=score,
                    ))
                    if len(spans) >= MAX_SPANS:
                        return spans
    return spans
