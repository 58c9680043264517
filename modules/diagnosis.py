"""A session: at most two rounds, routed by the code's verdict, then the answer; a failure ends it as what it is.

Routing (V1 + §19.4): LOW_CONFID below the threshold in round 1 → round 2 with a retry_context; anything else ends
the rounds (PASS, REJECT, LOW_CONFID at or above the threshold, or after round 2). The two-round limit is code.
"""

from __future__ import annotations

import logging

from evigate.modules.audit import RoundState, SessionRun, write_contributions, write_evaluation
from evigate.modules.executor import step_key
from evigate.modules.finish import finish_diagnosis
from evigate.modules.rounds import RoundRunner
from evigate.rules import build_retry_context
from evigate.rules.text.spelling import read_names
from evigate.signatures import DiagnosisResult
from evigate.store import AuditStore

logger = logging.getLogger(__name__)

MAX_ROUNDS = 2


def diagnose(runner: RoundRunner, query: str) -> DiagnosisResult:
    """Start a session for ``query``, run its rounds and finish it; an exception marks the session and goes on up."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("query must be a non-empty string")
    store = runner.store
    snapshot = {**runner.settings.model_dump(mode="json"), "program": runner.program}  # which prompts answered
    # The session records the question as asked; the rounds read its misspelt names as the domain's ("paymnet-service"
    # is payment-service), and the audit keeps each reading (rules/text/spelling.py).
    reading = read_names(query, runner.gatekeeper.vocabulary)
    run = SessionRun(store.start_session(query, settings=snapshot), reading.read_as)
    runner.progress.session_started(run.session_id)
    try:
        store.merge_self_evaluation(run.session_id, "query_reading", reading.model_dump(mode="json"))
        state = _run_rounds(runner, run)
        return finish_diagnosis(runner, run, state)
    except BaseException as exc:
        # An infrastructure failure, or Ctrl-C / a termination signal (KeyboardInterrupt, SystemExit): record it
        # on the session so that it never stays `running`, then let it go on up.
        end_abruptly(store, run.session_id, exc, rounds=len(run.history) + 1)
        raise


def _run_rounds(runner: RoundRunner, run: SessionRun) -> RoundState:
    retry = None
    for round_number in range(1, MAX_ROUNDS + 1):
        runner.progress.round_started(round_number)
        state = runner.run(run.session_id, run.query, round_number, retry)
        state.retry_context = retry
        write_evaluation(runner.store, run, state)
        if state.contribution is not None:
            run.contributions.rounds.append(state.contribution)
            write_contributions(runner.store, run)
        if not needs_another_round(state, round_number, runner.settings.verifier.low_confidence_threshold):
            return state
        run.history.append(state.record())
        retry = build_retry_context(state.decision, state.normalized, round_number,
                                    completed_steps(runner.store, run.session_id))
    raise AssertionError("unreachable: the last round always ends the rounds")


def needs_another_round(state: RoundState, round_number: int, threshold: float) -> bool:
    decision = state.decision
    return round_number < MAX_ROUNDS and decision.verdict == "LOW_CONFID" and decision.groundedness_score < threshold


def completed_steps(store: AuditStore, session_id: str) -> list[str]:
    """The tool steps this session already ran successfully (round 2 does not repeat them)."""
    return [step_key(inv.tool_name, inv.input) for inv in store.invocations(session_id) if inv.success]


def end_abruptly(store: AuditStore, session_id: str, exc: BaseException, *, rounds: int) -> None:
    interrupted = not isinstance(exc, Exception)
    error = f"interrupted ({type(exc).__name__})" if interrupted else f"{type(exc).__name__}: {exc}"
    try:
        store.finish_session(
            session_id,
            output_type=None,
            verdict=None,
            answer="",
            rounds=rounds,
            groundedness_score=None,
            error=error,
            status="interrupted" if interrupted else "failed",
        )
    except Exception as store_exc:  # the original exception is what the caller must see
        logger.warning("could not mark session %s %s: %s", session_id, "interrupted" if interrupted else
                       "failed", store_exc)
