"""After the Gatekeeper: code confirms what it can, the Verifier model judges the rest, code decides; then the guards.

One code path for the program's rounds (``modules/rounds.py``) and for evaluation (``optimize/eval_jobs.py``), so an
evaluation measures exactly what a user gets: the same code-confirmed labels, the same skipped Verifier call when
code decided every claim, the same caps, and the same two output guards on the Composer. What code adds before the
Gatekeeper (junk rewrites, excerpt and anchor observations, docs/confirmation.md §4–4d) runs in the rounds only:
the labelled fixtures' gold labels are for the Executor's claims as written, and an observation never changes a
verdict for the better, so an evaluation without them measures the Verifier and the matrix on what they were given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from evigate.rules import GateOutcome, VerdictDecision, check_claim_echo, check_composer_output, decide_verdict
from evigate.rules.answer.stated import unstated_claims
from evigate.rules.gate.session import SessionIndex
from evigate.rules.text.normalize import compact, fold
from evigate.rules.text.phrases import QUESTION_MARKS
from evigate.rules.verdict.confirmation import CodeJudgement, confirm_by_code, only_remaining
from evigate.rules.verdict.relevance import off_topic_claims, off_topic_items
from evigate.signatures import ComposerInput, ComposerOutput, VerifierInput, VerifierOutput

AskModel = Callable[[VerifierInput], "VerifierOutput | None"]


@dataclass
class Judgement:
    """The labels and verdict of one round, and whether the Verifier model was asked at all."""

    decision: VerdictDecision
    verifier_output: VerifierOutput | None
    code: CodeJudgement
    model_called: bool


def judge(
    ask_model: AskModel,
    verifier_input: VerifierInput,
    gate: GateOutcome,
    parse_status: str,
    verdict_impacts: Mapping[str, str],
    session: SessionIndex,
    observations: Iterable[str] = (),
) -> Judgement:
    """Code-confirmed labels first; the model (``ask_model``) sees only the remaining claims, and none when none remain.

    ``ask_model`` returns the model's ``VerifierOutput`` or None when it failed (every claim it was asked about then
    counts as unsupported, so a failed model call can never become a PASS). ``observations`` are the claims code
    added (``add_excerpt_observations``): shown like any claim, they never lift the verdict.
    """
    code = confirm_by_code(gate.normalized, session, failed_claims=gate.failed_claims)
    output: VerifierOutput | None = None
    called = parse_status == "valid" and code.model_needed
    if called:
        remaining = only_remaining(verifier_input.executor_structured_output or gate.normalized, code.remaining)
        output = ask_model(verifier_input.model_copy(update={"executor_structured_output": remaining}))
    decision = decide_verdict(
        gate.normalized,
        output.claim_checks if output else [],
        gate.result,
        parse_status,
        verdict_impacts,
        model_verdict=output.verdict if output else None,
        failed_claims=gate.failed_claims,
        excluded_claims=gate.excluded_claims,
        code_checks=code.confirmed,
        observations=observations,
        # Issue 18: a true line about something else never makes a NORMAL answer (docs/confirmation.md §4e).
        off_topic=off_topic_claims(gate.normalized, session),
        off_topic_items=off_topic_items(gate.normalized, session),
    )
    return Judgement(decision, output, code, called)


def verifier_output_or_none(prediction: Any) -> VerifierOutput | None:
    """The VerifierOutput inside an agent's prediction, or None."""
    candidate = getattr(prediction, "verifier_output", None) if prediction is not None else None
    return candidate if isinstance(candidate, VerifierOutput) else None


def guard_composer_output(
    composer_input: ComposerInput,
    output: ComposerOutput,
    normalized: Mapping[str, Any] | None,
    decision: VerdictDecision,
) -> list[str]:
    """Both output guards: entities, root causes, form (``check_composer_output``), then restated disallowed claims.

    The Composer never saw the disallowed claims; ``check_claim_echo`` makes sure it did not restate one anyway.
    """
    violations = answer_violations(composer_input, output)
    return violations + check_claim_echo([output.answer_summary, output.user_facing_answer], normalized, decision)


def answer_violations(composer_input: ComposerInput, output: ComposerOutput) -> list[str]:
    """The guards that need only the Composer's input: ``check_composer_output``, then an answer that only asks or
    restates the question, or that states none of the directly supported facts it was given."""
    violations = list(check_composer_output(composer_input, output))
    query = compact(fold(composer_input.original_query))
    answer = compact(fold(output.user_facing_answer))
    if output.user_facing_answer.strip().endswith(QUESTION_MARKS) or (query and answer and answer in query):
        # Measured on the 0.5B default: a Composer "answer" that was the user's question, passed as NORMAL.
        violations.append("the answer only asks or restates the question")
    elif not states_a_confirmed_fact(composer_input, output.user_facing_answer):
        violations.append("the answer states none of the directly supported facts it was given")
    return violations


def states_a_confirmed_fact(composer_input: ComposerInput, answer: str) -> bool:
    """Whether ``answer`` states one of the input's directly supported allowed claims (``states_claim``: its text, or
    every value of it); True when there is none to state.

    An answer that leaves out every fact the evidence showed tells the user nothing checked: the renderer, which
    lists them, is shown instead.
    """
    direct = [claim.claim_text for claim in composer_input.allowed_claims if claim.support_level == "direct"]
    return not direct or len(unstated_claims(direct, answer)) < len(direct)
