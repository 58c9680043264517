"""Composer input (§19.2) and output (§19.3) contracts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from evigate.signatures.executor import ClaimType
from evigate.signatures.verifier import Verdict

Locale = Literal["zh", "en"]
"""The languages evigate answers in: the user's, for the fixed texts and the Composer alike."""


class AllowedClaim(BaseModel):
    """A claim the Verifier allowed to be stated as fact."""

    claim_id: str
    claim_type: ClaimType
    claim_text: str
    support_level: str = "direct"


class AllowedHypothesis(BaseModel):
    """A hypothesis (or an overstated claim downgraded to one) that may be stated as a possible direction."""

    hypothesis_text: str
    needed_evidence: list[str] = Field(default_factory=list)


class ComposerAction(BaseModel):
    """A user-facing next step."""

    action_text: str
    reason: str = ""


class ComposerInput(BaseModel):
    """§19.2: assembled by code from allowed material only; no raw tool output, no unfiltered Executor output."""

    original_query: str
    verdict: Verdict
    allowed_claims: list[AllowedClaim] = Field(default_factory=list)
    allowed_hypotheses: list[AllowedHypothesis] = Field(default_factory=list)
    missing_info: list[str] = Field(default_factory=list)
    recommended_actions: list[ComposerAction] = Field(default_factory=list)
    rationale: str = ""
    locale: Locale | None = Field(
        default=None, description="the language the answer is written in (the user's); None: not set, not checked")


class ComposerOutput(BaseModel):
    """§19.3: strict JSON written by the Composer."""

    answer_summary: str
    recommended_actions: list[ComposerAction] = Field(default_factory=list)
    user_facing_answer: str
