"""claim.question_echo — a confirmed claim states a finding: not a question, not the user's question repeated."""

from __future__ import annotations

from pydantic import Field
from rapidfuzz import fuzz

from evigate.rules.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.session import iter_claims, text_of
from evigate.rules.text import compact, fold


class QuestionEchoParams(RuleParams):
    question_marks: list[str] = Field(default_factory=lambda: ["?", "？"], min_length=1)
    echo_similarity: float = Field(
        default=0.85, gt=0.0, le=1.0, description="claim vs. question similarity (0-1) from which it is a repeat"
    )


class QuestionEcho(Rule):
    """A claim that ends with a question mark, or that repeats the user's question, confirms nothing.

    Small models copy the question into `claim_text` (measured: "订单 123 支付失败，ERR_TIMEOUT 是什么原因？" as a
    `symptom` claim, its excerpt verbatim from the order, which a weak Verifier then called a direct observation).
    Such a claim passes every evidence check, so it is caught by its form: its text, stripped, ends with one of
    `questionMarks`, or its characters (folded, without spaces and punctuation) match the question's with an
    Indel similarity of at least `echoSimilarity`. A repeated question is no finding: LOW_CONFID-level, so the
    answer names gaps instead of presenting the question as a confirmed fact.
    """

    id = "claim.question_echo"
    Params = QuestionEchoParams

    def validate(self, context: RuleContext, params: QuestionEchoParams) -> list[RuleFinding]:
        question = compact(fold(context.session.query))
        findings: list[RuleFinding] = []
        for index, claim in iter_claims(context.data):
            text = text_of(claim, "claim_text").strip()
            if not text:
                continue
            if text.endswith(tuple(params.question_marks)):
                findings.append(RuleFinding(f"claims[{index}].claim_text", "a question is not a confirmed finding"))
                continue
            similarity = fuzz.ratio(compact(fold(text)), question) / 100 if question else 0.0
            if similarity >= params.echo_similarity:
                findings.append(RuleFinding(
                    f"claims[{index}].claim_text",
                    f"the claim repeats the user's question (similarity {similarity:.2f}) instead of stating a finding",
                ))
        return findings
