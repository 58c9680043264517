"""What code does to an Executor output before the Gatekeeper, in one place: the round (modules/rounds.py) and the
benchmark (bench/gatekeeper.py) run exactly this.

1. junk claim texts beside a verbatim excerpt become the tool's own observation (``rewrite_junk_claims``);
2. the line a capped or hedged claim quotes is added as the tool's observation (``add_excerpt_observations``);
3. the returned lines naming the question's order, error code or trace are added (``add_anchor_observations``).

Pure code (docs/confirmation.md §4–4d).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules.gate.session import SessionIndex
from evigate.rules.verdict.anchor_observations import add_anchor_observations
from evigate.rules.verdict.junk_claims import ClaimRewrite, add_excerpt_observations, rewrite_junk_claims


@dataclass
class CodeClaims:
    """The output after code's changes, every change (for the audit), and the claims code added (observations)."""

    data: dict[str, Any] | None
    rewrites: list[ClaimRewrite] = field(default_factory=list)
    observed: list[ClaimRewrite] = field(default_factory=list)


def add_code_claims(
    data: Mapping[str, Any] | None,
    session: SessionIndex,
    *,
    query: str = "",
    instructions: Sequence[str] = (),
    locale: str = "zh",
) -> CodeClaims:
    """Steps 1–3 above on a copy of ``data`` (never modified). ``observed`` lists only the added claims, which never
    lift the verdict (``decide_verdict(observations=)``); ``rewrites`` lists those and the rewritten junk claims."""
    rewritten, junk = rewrite_junk_claims(data, session, query=query, instructions=instructions, locale=locale)
    with_excerpts, excerpts = add_excerpt_observations(rewritten, session, query=query, locale=locale)
    with_anchors, anchors = add_anchor_observations(with_excerpts, session, query=query, locale=locale)
    observed = [*excerpts, *anchors]
    return CodeClaims(with_anchors, [*junk, *observed], observed)
