"""The ``contributions`` self_evaluation slot: what each agent contributed to a session (issue 18).

Per round: what became of the Executor's claims (kept as written, rewritten by code, added by code, dropped, each
with the reason), and who labelled the claims (the Verifier model, code, or code's caps). Once per session: whether
the Composer's text was shown, replaced by the renderer (with the violations) or never asked for. Counts are
derived from the per-claim list, so the two can never disagree. Written by the diagnosis program only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

ClaimStatus = Literal["kept", "rewritten", "added_by_code", "dropped"]
ComposerStatus = Literal["shown", "replaced", "skipped"]


class ClaimContribution(BaseModel):
    """One claim of a round's Executor output, and what code did with it."""

    claim_id: str
    status: ClaimStatus
    reason: str = ""


class ExecutorContribution(BaseModel):
    """The Executor's claims of one round by what became of them; the counts sum ``claims`` by status."""

    kept: int = Field(default=0, ge=0)
    rewritten: int = Field(default=0, ge=0)
    added_by_code: int = Field(default=0, ge=0)
    dropped: int = Field(default=0, ge=0)
    claims: list[ClaimContribution] = Field(default_factory=list)

    @classmethod
    def of(cls, claims: Sequence[ClaimContribution]) -> ExecutorContribution:
        counts = {status: sum(1 for claim in claims if claim.status == status)
                  for status in ("kept", "rewritten", "added_by_code", "dropped")}
        return cls(**counts, claims=list(claims))


class VerifierContribution(BaseModel):
    """Whether the Verifier model was asked, and where each claim's final label came from.

    Every judged claim is counted once: ``labels_from_caps`` when code lowered the label it was given (a §16 cap or
    a fail-level Gatekeeper error), else ``labels_from_model`` when the model's label stands, else
    ``labels_from_code`` (code confirmed a quote, or no one labelled the claim and code counted it unsupported).
    """

    model_called: bool = False
    labels_from_model: int = Field(default=0, ge=0)
    labels_from_code: int = Field(default=0, ge=0)
    labels_from_caps: int = Field(default=0, ge=0)


class RoundContribution(BaseModel):
    round: int = Field(ge=1)
    executor: ExecutorContribution = Field(default_factory=ExecutorContribution)
    verifier: VerifierContribution = Field(default_factory=VerifierContribution)


class DroppedLine(BaseModel):
    """A hypothesis, gap, action or line of prose code kept from the user, and why."""

    kind: str
    text: str
    reason: str


class ComposerContribution(BaseModel):
    """``shown``: the Composer's text is the answer; ``replaced``: the renderer's text is, because of ``violations``;
    ``skipped``: the Composer was not asked (``reason`` says why)."""

    status: ComposerStatus
    violations: list[str] = Field(default_factory=list)
    reason: str = ""
    lines_dropped: list[DroppedLine] = Field(default_factory=list)
    facts_added: list[str] = Field(
        default_factory=list,
        description="confirmed facts the Composer's shown text left out, listed by code after it",
    )


class Contributions(BaseModel):
    """The slot: one entry per round run (the final round last), and the Composer's part once the answer exists."""

    rounds: list[RoundContribution] = Field(default_factory=list)
    composer: ComposerContribution | None = None
