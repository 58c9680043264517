"""Issue 18 on the whole program: junk the Executor writes never reaches the answer, its reason is in the audit,
and an English answer carries no Chinese of code's own. Scripted agents, the real demo world and audit store."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evigate.modules.program import DiagnosisProgram
from evigate.signatures import ComposerInput, ComposerOutput
from evigate.store import AuditStore
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier, claim, v2

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
ECHO = "订单 123 支付失败，ERR_TIMEOUT 是什么原因，"
JUNK = ["订单 456 456 456 456 456 456", "用户收不到通知短信可能是由于网络问题或服务中断导致的", "立即联系客服",
        "补足证据（补足证据是补足证据的必要步骤，需要补足证据缺口，）"]
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef“”]")


def junk_output(results: list[Any], _round: int) -> str:
    order, _logs = results
    return v2(
        claim("claim-1", order, support="indirect"),  # capped: LOW_CONFID, so every section is rendered
        hypotheses=[{"hypothesis_text": JUNK[0], "basis": "pay-gateway 日志"},
                    {"hypothesis_text": JUNK[1], "basis": "用户反馈"}],
        actions=[{"action_text": JUNK[2], "reason": ECHO, "evidence_bindings": []},
                 {"action_text": JUNK[3], "reason": "", "evidence_bindings": []}],
        missing=[ECHO],
    )


def english_answer(ci: ComposerInput) -> ComposerOutput:
    """A Composer that writes English: only what it was given, joined by English words."""
    facts = "; ".join(claim.claim_text for claim in ci.allowed_claims)
    gaps = "; ".join(ci.missing_info)
    steps = "; ".join(action.action_text for action in ci.recommended_actions)
    return ComposerOutput(answer_summary=facts or "nothing confirmed", recommended_actions=ci.recommended_actions,
                          user_facing_answer=f"Observed: {facts}. Evidence gaps: {gaps}. Next step: {steps}.")


def _run(world_db: Path, composer: Any = None, **overrides: Any) -> tuple[Any, dict[str, Any]]:
    program = DiagnosisProgram.from_settings(
        database=world_db, planner=ScriptedPlanner(), executor=ScriptedExecutor(junk_output),
        verifier=ScriptedVerifier({"claim-1": "direct_observation"}), composer=ScriptedComposer(composer),
        **overrides)
    result = program(query=QUERY)
    return result, AuditStore(world_db).session(result.session_id)["self_evaluation"]["verifier_evaluation"]


def test_the_junk_of_issue_18_is_never_shown_and_the_audit_says_why(world_db: Path) -> None:
    result, evaluation = _run(world_db)
    assert result.verdict == "LOW_CONFID"
    for text in (*JUNK, "456 456 456", "是什么原因，"):
        assert text not in result.answer, (text, result.answer)
    gate_findings = {(e["rule_id"], e["target"]) for e in evaluation["gatekeeper_result"]["errors"]}
    assert {("action.junk_text", "hypotheses[0].hypothesis_text"),
            ("action.junk_text", "hypotheses[1].hypothesis_text"),
            ("action.junk_text", "recommended_actions[0].action_text"),
            ("action.junk_text", "recommended_actions[1].action_text"),
            ("action.junk_text", "missing_info[0]")} <= gate_findings
    shown = [reason for reason in evaluation["reasons"] if reason.startswith("not shown: ")]
    assert {"hypotheses[0]", "hypotheses[1]", "recommended_actions[0]", "recommended_actions[1]",
            "missing_info[0]"} <= {reason.split(": ")[1] for reason in shown}, shown


def test_an_english_answer_has_no_chinese_of_codes_own(world_db: Path) -> None:
    result, _ = _run(world_db, english_answer, locale="en")
    answer = result.answer
    for quoted in sorted([QUERY, *JUNK], key=len, reverse=True):
        answer = answer.replace(quoted, "")
    assert not CJK.search(answer), result.answer
