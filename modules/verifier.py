"""Verifier: judges whether each structured claim follows from the evidence. No tools, no rewriting.

Input isolation (V1): the model sees only the explicit §14 payload. The raw Executor text is debug-only (§15.5),
so it is blanked whenever the structured output parsed; Planner and Executor reasoning never reach it.
The model proposes claim checks and a verdict; code (``evigate.rules.decide_verdict``) decides.
"""

from __future__ import annotations

import dspy

from evigate.signatures import VerifierInput, VerifierOutput
from evigate.signatures.agents import VerifyClaims


def isolate_verifier_input(verifier_input: VerifierInput) -> VerifierInput:
    """What the Verifier model may see: the payload minus the raw Executor text once structured output exists."""
    if verifier_input.executor_structured_output is None:
        return verifier_input
    return verifier_input.model_copy(update={"executor_raw_output": "", "executor_final_answer": ""})


class Verifier(dspy.Module):
    """``verifier(verifier_input=VerifierInput) -> Prediction(verifier_output=VerifierOutput)``."""

    def __init__(self) -> None:
        super().__init__()
        self.judge = dspy.Predict(VerifyClaims)

    def forward(self, verifier_input: VerifierInput) -> dspy.Prediction:
        judgement = self.judge(verifier_input=isolate_verifier_input(verifier_input)).judgement
        output = VerifierOutput(
            verdict=judgement.verdict,
            claim_checks=judgement.claim_checks,
            hypothesis_checks=judgement.hypothesis_checks,
            rationale=judgement.rationale,
        )
        return dspy.Prediction(verifier_output=output)
