"""Scripted stand-ins for the four agents: dspy.Modules honouring the stage contracts, no language model."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import dspy

from evigate.signatures import (
    ClaimCheck,
    ComposerInput,
    ComposerOutput,
    HypothesisCheck,
    Plan,
    PlanStep,
    RetryContext,
    VerifierInput,
    VerifierOutput,
)

ORDER_STEP = {"tool": "query_order", "args": {"order_id": "123"}}
LOG_STEP = {"tool": "query_logs", "args": {"order_id": "123"}}
KB_STEP = {"tool": "lookup_knowledge", "args": {"query": "ERR_TIMEOUT"}}


class ScriptedPlanner(dspy.Module):
    def __init__(self, steps: list[dict[str, Any]] | None = None, fail: bool = False) -> None:
        super().__init__()
        self.steps = steps if steps is not None else [ORDER_STEP, LOG_STEP]
        self.fail = fail
        self.retry_contexts: list[RetryContext | None] = []

    def forward(self, query: str, retry_context: RetryContext | None = None) -> dspy.Prediction:
        self.retry_contexts.append(retry_context)
        if self.fail:
            raise RuntimeError("planner exploded")
        return dspy.Prediction(plan=Plan(skill="scripted", steps=[PlanStep(**step) for step in self.steps]))


class ScriptedExecutor(dspy.Module):
    """Runs the plan with the real toolbox, then writes raw text with ``write(results, round_number)``."""

    def __init__(self, write: Callable[[list[Any], int], str], sleep_s: float = 0.0) -> None:
        super().__init__()
        self.write, self.sleep_s = write, sleep_s
        self.rounds = 0
        self.retry_contexts: list[RetryContext | None] = []

    def forward(self, query: str, plan: Plan, retry_context: RetryContext | None = None, toolbox: Any = None):
        self.rounds += 1
        self.retry_contexts.append(retry_context)
        results = [toolbox.call(step.tool, **step.args) for step in plan.steps]
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return dspy.Prediction(raw_output=self.write(results, self.rounds))


class ScriptedVerifier(dspy.Module):
    """Answers every claim with ``verdicts[claim_id]`` (a verification, or a callable of the round)."""

    def __init__(
        self,
        verdicts: dict[str, Any] | Callable[[VerifierInput], dict[str, str]],
        *,
        model_verdict: str = "PASS",
        hypotheses: list[str] | None = None,
        fail: bool = False,
    ) -> None:
        super().__init__()
        self.verdicts, self.model_verdict, self.hypotheses, self.fail = verdicts, model_verdict, hypotheses or [], fail
        self.inputs: list[VerifierInput] = []

    def forward(self, verifier_input: VerifierInput) -> dspy.Prediction:
        self.inputs.append(verifier_input)
        if self.fail:
            raise TimeoutError("verifier model hung up")
        verdicts = self.verdicts(verifier_input) if callable(self.verdicts) else self.verdicts
        checks = [ClaimCheck(claim_id=cid, verification=v, detail="scripted") for cid, v in verdicts.items()]
        hyps = [HypothesisCheck(hypothesis_index=i, verification=v) for i, v in enumerate(self.hypotheses)]
        return dspy.Prediction(
            verifier_output=VerifierOutput(
                verdict=self.model_verdict, claim_checks=checks, hypothesis_checks=hyps, rationale="scripted rationale"
            )
        )


class ScriptedComposer(dspy.Module):
    def __init__(self, write: Callable[[ComposerInput], Any] | None = None, fail: bool = False) -> None:
        super().__init__()
        self.write, self.fail = write or faithful_answer, fail
        self.inputs: list[ComposerInput] = []

    def forward(self, composer_input: ComposerInput) -> dspy.Prediction:
        self.inputs.append(composer_input)
        if self.fail:
            raise RuntimeError("composer crashed")
        return dspy.Prediction(composer_output=self.write(composer_input))


def faithful_answer(ci: ComposerInput) -> ComposerOutput:
    """What a well-behaved Composer writes: only the allowed claims, gaps and actions."""
    facts = "；".join(claim.claim_text for claim in ci.allowed_claims)
    parts = [f"已确认：{facts}。" if facts else "目前没有可确认的信息。"]
    if ci.verdict != "PASS":
        parts.append("当前证据仍有缺口。")
        parts.extend(f"缺口：{gap}" for gap in ci.missing_info[:2])
        parts.extend(f"建议：{a.action_text}" for a in ci.recommended_actions[:1])
        if not ci.missing_info and not ci.recommended_actions:
            parts.append("建议补充更多证据后再确认。")
    return ComposerOutput(
        answer_summary=parts[0], recommended_actions=ci.recommended_actions, user_facing_answer="".join(parts)
    )


def first_line(result: Any) -> str:
    return next(line for line in result.output.splitlines() if line.strip()).strip()


def claim(
    claim_id: str,
    result: Any,
    *,
    claim_type: str = "symptom",
    text: str | None = None,
    excerpt: str | None = None,
    tool: str | None = None,
    ids: list[int] | None = None,
    support: str = "direct",
) -> dict[str, Any]:
    """A V2 claim bound to one tool result; by default it quotes the result's first line verbatim."""
    line = excerpt if excerpt is not None else first_line(result)
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text if text is not None else line,
        "support_level": support,
        "evidence_bindings": [
            {
                "source_type": "tool_trace",
                "tool_name": tool or result.tool_name,
                "source_invocation_ids": ids if ids is not None else [result.invocation_id],
                "evidence_excerpt": line,
            }
        ],
    }


def v2(
    *claims: dict[str, Any],
    hypotheses: list[dict[str, Any]] | None = None,
    missing: list[str] | None = None,
    actions: list[dict[str, Any]] | None = None,
) -> str:
    return json.dumps(
        {
            "answer_version": "executor_evidence_v2",
            "claims": list(claims),
            "hypotheses": hypotheses or [],
            "recommended_actions": actions or [],
            "missing_info": missing or [],
        },
        ensure_ascii=False,
    )
