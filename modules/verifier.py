"""Verifier: judges whether each structured claim follows from the evidence. No tools, no rewriting.

Input isolation (V1): the model sees only the explicit §14 payload. The raw Executor text is debug-only (§15.5),
so it is blanked whenever the structured output parsed; Planner and Executor reasoning never reach it.
The model proposes claim checks and a verdict; code (``evigate.rules.decide_verdict``) decides.
"""

from __future__ import annotations

from typing import Any

import dspy
from pydantic import model_serializer

from evigate.signatures import VerifierInput, VerifierOutput
from evigate.signatures.agents import VerifyClaims


def isolate_verifier_input(verifier_input: VerifierInput) -> VerifierInput:
    """What the Verifier model may see: the payload minus the raw Executor text once structured output exists."""
    if verifier_input.executor_structured_output is None:
        return verifier_input
    return verifier_input.model_copy(update={"executor_raw_output": "", "executor_final_answer": ""})


class PromptVerifierInput(VerifierInput):
    """The §14 payload as the model reads it: serialised without empty values, zero counters and repeats.

    Nothing is summarised or reworded; a trace entry simply does not spell out ``"query_samples": []``,
    ``"miss_count": 0``, a ``call_count`` of 1, query samples that only repeat its ``input_summary``, or a binding's
    default ``source_type``. Prompt evaluation is most of a local model's time, and these are a good part of the
    Verifier's prompt. Still a VerifierInput, so the signature's type holds.
    """

    @model_serializer(mode="wrap")
    def _without_empty_values(self, handler: Any) -> Any:
        return _prune(handler(self))


def verifier_prompt_payload(verifier_input: VerifierInput) -> PromptVerifierInput:
    """The isolated payload in its prompt form (see PromptVerifierInput)."""
    isolated = isolate_verifier_input(verifier_input)
    return PromptVerifierInput.model_validate(isolated.model_dump())


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        kept = {key: _prune(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if not _says_nothing(key, item, kept)}
    if isinstance(value, list):
        return [_prune(item) for item in value]
    return value


def _says_nothing(key: str, item: Any, siblings: dict[str, Any]) -> bool:
    if item in (None, "", [], {}) or (key.endswith("_count") and item == 0):
        return True
    if key == "call_count":
        return item == 1
    if key == "query_samples":
        return item == [siblings.get("input_summary")]
    return key == "source_type" and item == "tool_trace"


class Verifier(dspy.Module):
    """``verifier(verifier_input=VerifierInput) -> Prediction(verifier_output=VerifierOutput)``."""

    def __init__(self) -> None:
        super().__init__()
        self.judge = dspy.Predict(VerifyClaims)

    def forward(self, verifier_input: VerifierInput) -> dspy.Prediction:
        judgement = self.judge(verifier_input=verifier_prompt_payload(verifier_input)).judgement
        output = VerifierOutput(
            verdict=judgement.verdict,
            claim_checks=judgement.claim_checks,
            hypothesis_checks=judgement.hypothesis_checks,
            rationale=judgement.rationale,
        )
        return dspy.Prediction(verifier_output=output)
