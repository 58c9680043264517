"""`evigate eval --agent program` runs the program's own post-gate path: both output guards, code confirmation."""

from __future__ import annotations

from typing import Any

from evigate.datasets import load_verifier_cases
from evigate.datasets.loaders import verifier_example
from evigate.optimize.data import AgentData
from evigate.optimize.eval_jobs import _evaluate_program
from evigate.optimize.verifier_metric import GateCache
from evigate.rules import build_composer_input, check_composer_output, decide_verdict
from evigate.signatures import ClaimCheck, ComposerInput, ComposerOutput, VerifierOutput
from tests.modules.scripted import ScriptedComposer, ScriptedVerifier, faithful_answer


def _echoing(disallowed: list[str]) -> Any:
    def write(ci: ComposerInput) -> ComposerOutput:
        faithful = faithful_answer(ci)
        restated = "".join(f"已确认：{text}。" for text in disallowed)
        return ComposerOutput(answer_summary=faithful.answer_summary,
                              user_facing_answer=restated + faithful.user_facing_answer)
    return write


def _a_case_only_the_echo_guard_catches() -> tuple[Any, list[str]]:
    gates = GateCache()
    for case in load_verifier_cases(["demo_world"]):
        if case.gold_verdict != "LOW_CONFID":
            continue
        gate, status = gates.outcome(case)
        disallowed = [claim["claim_text"] for claim in (gate.normalized or {}).get("claims", [])
                      if case.gold_labels[claim["claim_id"]] in ("unsupported", "overstated")]
        if status != "valid" or not disallowed:
            continue
        checks = [ClaimCheck(claim_id=k, verification=v) for k, v in case.gold_labels.items()]
        decision = decide_verdict(gate.normalized, checks, gate.result, status, gates.gatekeeper.verdict_impacts,
                                  failed_claims=gate.failed_claims, excluded_claims=gate.excluded_claims)
        ci = build_composer_input(case.verifier_input.original_query, gate.normalized,
                                  VerifierOutput(verdict="LOW_CONFID", claim_checks=checks), decision)
        if not check_composer_output(ci, _echoing(disallowed)(ci)):
            return case, disallowed
    raise AssertionError("no fixture where only check_claim_echo catches the restated claim")


def test_eval_program_runs_the_claim_echo_guard_the_program_runs() -> None:
    case, disallowed = _a_case_only_the_echo_guard_catches()
    data = AgentData()
    data.splits["dev"] = [verifier_example(case)]
    modules = {"verifier": ScriptedVerifier(dict(case.gold_labels), model_verdict="LOW_CONFID"),
               "composer": ScriptedComposer(_echoing(disallowed))}
    metrics, rows = _evaluate_program(modules, data, "dev", lambda _d, _t: (lambda: None))  # type: ignore[arg-type]
    (row,) = rows
    assert row["composer_called"] and row["composer_clean"] is False
    assert "as fact although the Verifier did not allow it" in row["violations"]
    assert metrics["composer_clean_rate"] == 0.0


def test_eval_program_asks_the_verifier_only_about_what_code_left() -> None:
    cases = load_verifier_cases(["demo_world"])
    gates = GateCache()
    case = next(c for c in cases if gates.outcome(c)[1] == "valid" and gates.code_judgement(c).confirmed)
    verifier = ScriptedVerifier(dict(case.gold_labels), model_verdict=case.gold_verdict)
    data = AgentData()
    data.splits["dev"] = [verifier_example(case)]
    _, rows = _evaluate_program({"verifier": verifier, "composer": ScriptedComposer()}, data, "dev",
                                lambda _d, _t: (lambda: None))  # type: ignore[arg-type]
    confirmed = set(gates.code_judgement(case).confirmed)
    asked = {c["claim_id"] for vi in verifier.inputs for c in vi.executor_structured_output["claims"]}
    assert not asked & confirmed and set(rows[0]["code_confirmed"].split(",")) == confirmed


def test_a_composer_answer_that_is_the_question_is_replaced() -> None:
    from evigate.modules.judgement import guard_composer_output

    case = load_verifier_cases(["demo_world"])[0]
    gates = GateCache()
    gate, status = gates.outcome(case)
    checks = [ClaimCheck(claim_id=k, verification=v) for k, v in case.gold_labels.items()]
    decision = decide_verdict(gate.normalized, checks, gate.result, status, gates.gatekeeper.verdict_impacts)
    ci = build_composer_input(case.verifier_input.original_query, gate.normalized,
                              VerifierOutput(verdict="PASS", claim_checks=checks), decision)
    question = case.verifier_input.original_query
    output = ComposerOutput(answer_summary=question, user_facing_answer=question)
    assert "the answer only asks or restates the question" in guard_composer_output(ci, output, gate.normalized,
                                                                                    decision)
