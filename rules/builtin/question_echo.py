"""claim.question_echo — a confirmed claim states a finding: it is not a question (the user's, copied, or another)."""

from __future__ import annotations

from pydantic import Field

from evigate.rules.contract import claim_text, iter_claims
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.text.phrases import (
    INTERROGATIVES,
    QUESTION_MARKS,
    QUESTION_OPENINGS,
    is_question,
    opens_with,
    question_words,
)


class QuestionEchoParams(RuleParams):
    question_marks: list[str] = Field(default_factory=lambda: list(QUESTION_MARKS), min_length=1)
    interrogatives: list[str] = Field(
        default_factory=lambda: list(INTERROGATIVES),
        description="words that make a sentence a question even without its question mark",
    )
    openings: list[str] = Field(
        default_factory=lambda: list(QUESTION_OPENINGS),
        description="English words that make a sentence a question when it opens with one (why, what, how …)",
    )


class QuestionEcho(Rule):
    """A claim phrased as a question confirms nothing.

    Small models copy the question into `claim_text` (measured: "订单 123 支付失败，ERR_TIMEOUT 是什么原因？" as a
    `symptom` claim, its excerpt verbatim from the order, which a weak Verifier then called a direct observation).
    Such a claim passes every evidence check, so it is caught by its form: its text, stripped, ends with one of
    `questionMarks`, or it contains one of `interrogatives` (为什么, 是什么, 怎么回事 …; not 是否 or 如何, which fair
    claims use), or it opens with one of `openings` (why, what, how …: a restated question in English, measured
    under "Confirmed information" in issue 18; not is / did, as 是否 is not). Restating the facts of the
    question is fine ("订单 456 支付失败，错误码为 ERR_DB_POOL_EXHAUSTED" confirms what the user reported). A
    question is no finding: LOW_CONFID-level, so the answer names gaps instead of presenting it as confirmed.
    """

    id = "claim.question_echo"
    Params = QuestionEchoParams

    def validate(self, context: RuleContext, params: QuestionEchoParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for index, claim in iter_claims(context.data):
            text = claim_text(claim)
            if is_question(text, params.question_marks, params.interrogatives, params.openings):
                opening = opens_with(text, params.openings)
                asks = question_words(text, params.interrogatives) + ([opening] if opening else [])
                detail = f" (asks with {', '.join(repr(word) for word in asks)})" if asks else ""
                findings.append(
                    RuleFinding(f"claims[{index}].claim_text", f"a question is not a confirmed finding{detail}")
                )
        return findings
