"""``evigate eval``: score the saved (or built-in) agents on one split and log the run to MLflow.

``--agent verifier|composer`` evaluates one agent on its own fixtures (Verifier labels are scored with code's
confirmed labels and caps, as the program applies them). ``--agent program`` runs the program's own code path after
the Gatekeeper (``modules/judgement.py``): code confirms quotes → the saved Verifier on the remaining claims (not
called when none remain) → code verdict → (PASS/LOW_CONFID) Composer input built by code → Composer → both output
guards (``check_composer_output`` and ``check_claim_echo``), on the Verifier fixtures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy

from evigate.datasets.loaders import case_of
from evigate.llm.adapter import adapter_for
from evigate.optimize import tracking
from evigate.optimize.data import AgentData, default_eval_limit, load_agent_data, load_saved_module, resolve_lm
from evigate.optimize.evaluation import EvalResult, evaluate_agent, per_claim_rows
from evigate.optimize.jobs import StartTask, log_confusions, no_progress
from evigate.optimize.verifier_metric import GateCache, VerifierScore, score_verifier, summarize_verifier


@dataclass
class EvalJobResult:
    """What ``evigate eval`` measured and where it logged it."""

    agent: str
    split: str
    run_id: str
    tracking_uri: str
    metrics: dict[str, float]
    state_file: Path | None
    seconds: float
    evaluation: EvalResult | None = None
    program_rows: list[dict[str, Any]] = field(default_factory=list)


def run_eval(agent: str, split: str = "dev", *, model: str | None = None, program_dir: str | Path | None = None,
             sets: tuple[str, ...] = ("demo_world", "holmesgpt"), eval_limit: int | None = None,
             tracking_uri: str | None = None, num_threads: int = 1, lm: Any = None,
             modules: dict[str, dspy.Module] | None = None, llm_threads: int | None = None,
             progress: StartTask = no_progress, data_path: str | Path | None = None) -> EvalJobResult:
    """Evaluate ``agent`` (verifier, composer or program) on ``split`` and log one MLflow run; ``data_path``: a
    team's own fixtures instead of the shipped sets."""
    import mlflow

    if split not in ("train", "dev", "test"):
        raise ValueError(f"unknown split {split!r}; use dev or test")
    started = time.perf_counter()
    data_agent = "verifier" if agent == "program" else agent
    if data_path is not None:  # a team's file is checked before any model is loaded
        load_agent_data(data_agent, (), None, splits=(split,), data_path=data_path)
    modules = dict(modules or {})
    needed = ("verifier", "composer") if agent == "program" else (agent,)
    state_files: dict[str, Path | None] = {}
    for name in needed:
        if name not in modules:
            modules[name], state_files[name] = load_saved_module(name, program_dir)
    lm, model_name = resolve_lm(data_agent, model, lm, llm_threads)
    eval_limit = default_eval_limit(eval_limit, model_name, data_agent)
    data = load_agent_data(data_agent, sets, eval_limit, splits=(split,), data_path=data_path)
    uri = tracking.configure(tracking_uri)
    tracking.ensure_experiment(agent, uri)
    tracking.enable_autolog()
    try:
        with dspy.context(lm=lm, adapter=adapter_for(lm)), mlflow.start_run(run_name=f"eval-{agent}-{split}") as run:
            mlflow.log_params({
                "agent": agent, "split": split, "model": model_name, "examples": len(data.splits[split]),
                "digest": data.digests[split], "eval_limit": eval_limit or 0, "data": str(data_path or "shipped"),
                **{f"{name}_state": str(path) if path else "built-in" for name, path in state_files.items()},
            })
            mlflow.set_tags({"evigate.agent": agent, "evigate.job": "eval"})
            tracking.log_dataset(data.rows[split], f"{data_agent}-{split}", split, data.digests[split])
            if agent == "program":
                metrics, rows = _evaluate_program(modules, data, split, progress)
                evaluation = None
            else:
                tick = progress(f"eval {agent} on {split}", len(data.splits[split]))
                evaluation = evaluate_agent(agent, modules[agent], data.splits[split], label=split,
                                            num_threads=num_threads, tick=tick)
                metrics = evaluation.metrics()
                rows = per_claim_rows(evaluation, data.cases, "eval")
                if agent == "verifier":
                    log_confusions({split: evaluation})
            mlflow.log_metrics(metrics)
            tracking.log_table(rows, "per_claim_results.json" if agent in ("verifier", "program")
                              else "per_case_results.json")
            run_id = run.info.run_id
    finally:
        tracking.disable_autolog()
    return EvalJobResult(agent, split, run_id, uri, metrics, state_files.get(agent), time.perf_counter() - started,
                         evaluation, rows if agent == "program" else [])


def _evaluate_program(modules: dict[str, dspy.Module], data: AgentData, split: str,
                      progress: StartTask) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """The program's own path after the Gatekeeper (modules/judgement.py), case by case."""
    from evigate.modules.judgement import guard_composer_output, judge, verifier_output_or_none
    from evigate.optimize.composer_metric import composer_output_of, expression_checks
    from evigate.rules import build_composer_input

    gates = GateCache()
    tick = progress(f"eval program (verifier → composer) on {split}", len(data.splits[split]))
    scores: list[VerifierScore] = []
    rows: list[dict[str, Any]] = []
    composed = clean = expressed = skipped = 0
    for example in data.splits[split]:
        case = case_of(example)
        gate, parse_status = gates.outcome(case)
        session = gates.gatekeeper.session_index(case.invocations, case.session_id,
                                                 case.verifier_input.tool_trace_summary)
        errors: list[str] = []

        def ask_model(model_input: Any, errors: list[str] = errors) -> Any:
            prediction, error = _call(modules["verifier"], verifier_input=model_input)
            if error:
                errors.append(error)
            return verifier_output_or_none(prediction)

        judgement = judge(ask_model, case.verifier_input, gate, parse_status, gates.gatekeeper.verdict_impacts,
                          session)
        skipped += parse_status == "valid" and not judgement.model_called
        checks = {**{c.claim_id: c for c in (judgement.verifier_output.claim_checks
                                               if judgement.verifier_output else [])}, **judgement.code.confirmed}
        prediction = dspy.Prediction(verifier_output=(judgement.verifier_output or _no_output()).model_copy(
            update={"claim_checks": list(checks.values())}))
        score = score_verifier(case, prediction, gates, error=errors[0] if errors else None, code_confirmation=True)
        scores.append(score)
        decision = judgement.decision
        row: dict[str, Any] = {"case_id": case.case_id, "gold_verdict": case.gold_verdict,
                               "code_verdict": decision.verdict, "claim_accuracy": round(score.claim_accuracy, 4),
                               "verifier_called": judgement.model_called,
                               "code_confirmed": ",".join(decision.code_confirmed),
                               "composer_called": False, "composer_clean": None, "violations": ""}
        if decision.verdict != "REJECT" and parse_status == "valid":
            composer_input = build_composer_input(case.verifier_input.original_query, gate.normalized,
                                                  judgement.verifier_output or _no_output(), decision)
            composed += 1
            answer, answer_error = _call(modules["composer"], composer_input=composer_input)
            composer_output = composer_output_of(answer)
            violations = (guard_composer_output(composer_input, composer_output, gate.normalized, decision)
                          if composer_output else [answer_error or "no composer output"])
            is_clean = not violations
            clean += is_clean
            if composer_output is not None:
                text = f"{composer_output.answer_summary}{composer_output.user_facing_answer}"
                checks_ok = expression_checks(composer_input, "".join(text.split()).casefold())
                expressed += is_clean and all(ok for _, ok in checks_ok)
            row.update(composer_called=True, composer_clean=is_clean, violations=" | ".join(map(str, violations)))
        rows.append(row)
        tick()
    summary = summarize_verifier(scores)
    metrics = summary.metrics("verifier_")
    metrics.update({"composer_calls": float(composed), "composer_clean_rate": clean / composed if composed else 0.0,
                    "composer_expression_rate": expressed / composed if composed else 0.0,
                    "verifier_skipped": float(skipped),
                    "end_to_end_verdict_accuracy": summary.verdict_accuracy})
    return metrics, rows


def _no_output() -> Any:
    from evigate.signatures import VerifierOutput

    return VerifierOutput(verdict="LOW_CONFID", rationale="")


def _call(module: dspy.Module, **inputs: Any) -> tuple[Any, str | None]:
    try:
        return module(**inputs), None
    except Exception as exc:  # an agent failure is a scored outcome, not a crash of the evaluation
        return None, f"{type(exc).__name__}: {exc}"
