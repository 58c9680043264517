"""Asking the question bank through a real program, and comparing two programs on the same questions.

One question → one fresh session → an :class:`~evigate.optimize.question_metrics.AnsweredQuestion` read back from
the session's audit trail (what the metrics need), so answers can be scored again without rerunning anything.
:func:`compare_programs` asks every question of both programs in turn (interleaved: both meet the same machine load)
and reports useful / wrong / junk / NORMAL and p50 seconds per round for each, the paired bootstrap interval of the
change in useful answers, and the p50 ratio (issue 19: the compiled program's demos may cost at most +20 % per round).
Used by ``bench/questions.py --compare-compiled`` and ``evigate optimize program --end-to-end N``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.optimize.question_metrics import AnsweredQuestion, score_answer
from evigate.optimize.stats import bootstrap_median, paired_bootstrap

P50_BUDGET = 1.2
"""The compiled program's p50 seconds per round may be at most 20 % above the built-in one's (issue 19)."""


def round_seconds(store: Any, session_id: str) -> list[float]:
    """Seconds of each round of a session (as in bench/pipeline.py: plan, execute, gate and verify; no Composer)."""
    per_round: dict[int, float] = {}
    for step in store.steps(session_id):
        if step["agent"] == "composer":
            continue
        per_round[step["round"]] = per_round.get(step["round"], 0.0) + (step["latency_ms"] or 0) / 1000
    return [seconds for _, seconds in sorted(per_round.items())]


def record_session(store: Any, question: Any, result: Any, seconds: float, model: str) -> AnsweredQuestion:
    """What the metrics need of one finished session, read back from its audit trail."""
    record = store.session(result.session_id)
    evaluation = record.get("self_evaluation") or {}
    invocations = store.invocations(result.session_id)
    plan = [{"round": inv.round, "tool": inv.tool_name, "args": inv.input, "success": inv.success}
            for inv in invocations]
    return AnsweredQuestion(
        **question.model_dump(), model=model, session_id=result.session_id, output_type=result.output_type,
        verdict=result.verdict, answer=result.answer, seconds=round(seconds, 2),
        round_seconds=[round(s, 2) for s in round_seconds(store, result.session_id)],
        composer_input=(evaluation.get("verifier_evaluation") or {}).get("composer_input"),
        outputs=[inv.output or inv.output_preview for inv in invocations if inv.success], plan=plan,
        contributions=evaluation.get("contributions"),
    )


def ask_question(program: Any, question: Any) -> AnsweredQuestion:
    """``question`` through ``program`` in a fresh session; a failure to run is recorded, not raised."""
    model = program.settings.models.default
    program.settings.locale = question.locale
    began = time.perf_counter()
    try:
        result = program(query=question.text)
        return record_session(program.store, question, result, time.perf_counter() - began, model)
    except Exception as exc:  # one failed question is a figure, not the end of the benchmark
        return AnsweredQuestion(**question.model_dump(), model=model, error=f"{type(exc).__name__}: {exc}",
                                seconds=round(time.perf_counter() - began, 2))


@dataclass
class ProgramFigures:
    """The question-bank metrics of one program's answers."""

    asked: int
    ran: int
    answerable: int
    useful: int
    wrong: int
    junk: int
    normal: int
    p50_round_seconds: float | None

    def metrics(self, prefix: str) -> dict[str, float]:
        figures = {key: float(value) for key, value in vars(self).items() if value is not None}
        return {f"{prefix}{key}": value for key, value in figures.items()}


def figures_of(answers: Sequence[AnsweredQuestion], incidents: Sequence[Any]) -> ProgramFigures:
    scores = [score_answer(answer, incidents) for answer in answers]
    ran = [(a, s) for a, s in zip(answers, scores, strict=True) if not s.failed]
    median = bootstrap_median([seconds for answer, _ in ran for seconds in answer.round_seconds])
    return ProgramFigures(
        asked=len(answers), ran=len(ran), answerable=sum(s.answerable for _, s in ran),
        useful=sum(bool(s.useful) for _, s in ran if s.answerable), wrong=sum(bool(s.wrong) for _, s in ran),
        junk=sum(bool(s.junk) for _, s in ran), normal=sum(s.normal for _, s in ran),
        p50_round_seconds=median[0] if median else None,
    )


@dataclass
class Comparison:
    """Two programs on the same questions: figures of each, the useful delta's interval and the p50 ratio."""

    compiled: ProgramFigures
    builtin: ProgramFigures
    useful_delta: tuple[float, float, float]
    p50_ratio: float | None
    answers: dict[str, list[AnsweredQuestion]]

    def metrics(self) -> dict[str, float]:
        delta, low, high = self.useful_delta
        metrics = {**self.compiled.metrics("e2e_compiled_"), **self.builtin.metrics("e2e_builtin_"),
                   "e2e_useful_delta": delta, "e2e_useful_delta_low": low, "e2e_useful_delta_high": high}
        if self.p50_ratio is not None:
            metrics["e2e_p50_ratio"] = self.p50_ratio
        return metrics


def compare_programs(compiled: Any, builtin: Any, questions: Sequence[Any], incidents: Sequence[Any],
                     on_answer: Callable[[str, AnsweredQuestion], None] = lambda _which, _answer: None) -> Comparison:
    """Ask every question of both programs, alternating which goes first, and compare what they answered."""
    answers: dict[str, list[AnsweredQuestion]] = {"compiled": [], "built-in": []}
    programs = {"compiled": compiled, "built-in": builtin}
    for number, question in enumerate(questions):
        order = ("compiled", "built-in") if number % 2 == 0 else ("built-in", "compiled")
        for which in order:
            answer = ask_question(programs[which], question)
            answers[which].append(answer)
            on_answer(which, answer)
    on, off = figures_of(answers["compiled"], incidents), figures_of(answers["built-in"], incidents)
    by_id = {which: {a.id: score_answer(a, incidents) for a in answers[which]} for which in answers}
    # Paired by question: an answerable question both programs ran, useful (1) or not (0) under each.
    paired = [qid for qid, score in by_id["built-in"].items()
              if score.answerable and not score.failed and not by_id["compiled"][qid].failed]
    delta = paired_bootstrap([float(bool(by_id["built-in"][q].useful)) for q in paired],
                             [float(bool(by_id["compiled"][q].useful)) for q in paired])
    ratio = (on.p50_round_seconds / off.p50_round_seconds
             if on.p50_round_seconds is not None and off.p50_round_seconds else None)
    return Comparison(on, off, delta, ratio, answers)
