"""The question bank through the real program: useful, wrong, junk, NORMAL and seconds per round, with 95 % CIs.

Questions come from datasets/data/question_bank.yaml (issue 18): operator questions per demo incident, by symptom,
service and time, code or order, in zh and en, plus questions no incident answers. Each is asked through one
program built from the embedded defaults (or ``--settings``), a fresh session per question; every answer is written
as one JSONL row (question, answer, the Composer input, the session's tool output previews, the plan, the audit's
``contributions`` when there is one), and the metrics are computed by code from the world's ground truth
(evigate.optimize.question_metrics). ``--score FILE`` scores such a JSONL again without running anything.

Rates carry Wilson 95 % intervals, the median seconds per round a seeded bootstrap 95 % interval. Tune on train and
dev only: the test split is read only to report.

``--plans`` runs no model: it shows, per question, the window the question's times span and the skill code decides
(an error code the question names, or the census of the records it points at), against the incident's own runbook
(the one skill whose text lists the incident's error code) — the evidence a round starts from.

Rerun:  .venv/bin/python bench/questions.py --split dev --limit 10 --out /tmp/dev.jsonl
        .venv/bin/python bench/questions.py --split train --plans
        .venv/bin/python bench/questions.py --split dev --locale zh --ids relative-zh-06,terse-en-05
        .venv/bin/python bench/questions.py --score /tmp/dev.jsonl
        .venv/bin/python bench/questions.py --split test --limit 10 --compare-compiled --quiet

``--compare-compiled`` asks every question with the shipped compiled program on and off in one run (alternating
which goes first) and prints useful / wrong / junk / NORMAL and p50 seconds per round of each, the paired interval
of the useful change and the p50 ratio (the demos a compiled program adds may cost at most +20 % per round).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "local/qwen2.5-coder-0.5b"


def ask(questions: Sequence[Any], model: str, settings: str | None, out: Path) -> list[Any]:
    """Each question through one program (a fresh session each), every answer appended to ``out`` as it comes."""
    from evigate.modules.program import DiagnosisProgram
    from evigate.optimize.question_runs import ask_question

    workdir = Path(tempfile.mkdtemp(prefix="evigate-questions-"))
    overrides: dict[str, Any] = {} if settings else {"models": {"default": model}}
    program = DiagnosisProgram.from_settings(settings, database=workdir / "evigate.duckdb", **overrides)
    print(f"  audit of these sessions (`evigate show --database …`): {workdir / 'evigate.duckdb'}", flush=True)
    answered: list[Any] = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as sink:
        for question in questions:
            item = ask_question(program, question)
            sink.write(item.model_dump_json() + "\n")
            sink.flush()
            answered.append(item)
            print(f"  {item.id}: {item.output_type or item.error} {item.verdict or ''} {item.seconds:.0f}s", flush=True)
    return answered


def compare_compiled(questions: Sequence[Any], model: str, settings: str | None, out: Path) -> int:
    """The same questions through the program with and without the shipped compiled program, in one run."""
    from evigate.demo.catalog import INCIDENTS
    from evigate.modules.program import DiagnosisProgram
    from evigate.optimize.program_job import builtin_program
    from evigate.optimize.question_runs import P50_BUDGET, compare_programs

    workdir = Path(tempfile.mkdtemp(prefix="evigate-questions-"))
    overrides: dict[str, Any] = {} if settings else {"models": {"default": model}}
    from evigate.errors import ConfigError

    try:
        compiled = DiagnosisProgram.from_settings(settings, database=workdir / "compiled.duckdb", **overrides)
        builtin = builtin_program(settings, database=workdir / "builtin.duckdb", **overrides)
    except ConfigError as exc:  # a damaged shipped program, or a configured program_dir on both sides
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"  compiled program: {compiled.program_choice.record()}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as sink:

        def keep(which: str, answer: Any) -> None:
            sink.write(json.dumps({"program": which, **answer.model_dump(mode="json")}, ensure_ascii=False) + "\n")
            sink.flush()
            print(f"  [{which}] {answer.id}: {answer.output_type or answer.error} {answer.seconds or 0:.0f}s",
                  flush=True)

        comparison = compare_programs(compiled, builtin, questions, INCIDENTS, on_answer=keep)
    print(f"\n{'':<10} {'useful':>12} {'wrong':>7} {'junk':>6} {'NORMAL':>7} {'p50 s/round':>12}")
    for name, figures in (("compiled", comparison.compiled), ("built-in", comparison.builtin)):
        p50 = f"{figures.p50_round_seconds:.1f}" if figures.p50_round_seconds is not None else "n/a"
        print(f"{name:<10} {figures.useful:>5}/{figures.answerable:<6} {figures.wrong:>7} {figures.junk:>6} "
              f"{figures.normal:>7} {p50:>12}")
    delta, low, high = comparison.useful_delta
    print(f"useful Δ (compiled − built-in, paired by question): {delta:+.3f} [95 % CI {low:+.3f} – {high:+.3f}]")
    ratio = comparison.p50_ratio
    within = "n/a" if ratio is None else "within" if ratio <= P50_BUDGET else "OVER"
    verdict = "n/a" if ratio is None else f"{ratio:.2f} ({within} the +20 % budget)"
    print(f"p50 per round, compiled / built-in: {verdict}\nanswers: {out}")
    return 0


def read_answers(path: Path) -> list[Any]:
    from evigate.errors import DatasetError
    from evigate.optimize.question_metrics import AnsweredQuestion

    answers = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            answers.append(AnsweredQuestion.model_validate(json.loads(line)))
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: not an answered question: {exc}") from exc
    return answers


def _rate(label: str, hits: int, total: int, target: str = "") -> str:
    from evigate.optimize.stats import wilson

    rate, low, high = wilson(hits, total)
    shown = f"{hits}/{total} = {100 * rate:.1f} % [95 % CI {100 * low:.1f}–{100 * high:.1f}]" if total else "n/a"
    return f"  {label:<44} {shown}{f'  (target {target})' if target else ''}"


def report(answers: Sequence[Any], verbose: bool = True) -> dict[str, Any]:
    """Print the metrics of ``answers``; return the figures."""
    from evigate.demo.catalog import INCIDENTS
    from evigate.optimize.question_metrics import contribution_sums, executor_own_claims, score_answer
    from evigate.optimize.stats import bootstrap_median

    scored = [(answer, score_answer(answer, INCIDENTS)) for answer in answers]
    ran = [(a, s) for a, s in scored if not s.failed]
    answerable = [(a, s) for a, s in ran if s.answerable]
    unanswerable = [(a, s) for a, s in ran if not s.answerable]
    figures = {
        "asked": len(answers), "failed": len(answers) - len(ran),
        "useful": sum(bool(s.useful) for _, s in answerable), "answerable": len(answerable),
        "wrong": sum(bool(s.wrong) for _, s in ran), "junk": sum(bool(s.junk) for _, s in ran),
        "normal": sum(s.normal for _, s in ran), "ran": len(ran),
        "normal_without_key_fact": sum(s.normal_without_key_fact for _, s in answerable),
        "none_confirmed": sum(not s.confirmed for _, s in unanswerable), "unanswerable": len(unanswerable),
        "echoed": sum(bool(s.echoed) for _, s in ran),
    }
    if verbose:
        for answer, score in scored:
            state = answer.error or f"{answer.output_type} ({answer.verdict}) {answer.seconds or 0:.0f}s"
            print(f"  {answer.id} [{answer.incident or 'none'}] {state}: useful {len(score.useful)}, "
                  f"wrong {len(score.wrong)}, junk {len(score.junk)}, confirmed {len(score.confirmed)}")
            for line in [*score.wrong[:2], *score.junk[:2], *(f"echoes the question: {t}" for t in score.echoed[:1])]:
                print(f"      ✗ {line[:140]}")
    print(f"\n{figures['asked']} question(s), {figures['failed']} failed to run")
    print(_rate("useful (key fact of its incident confirmed)", figures["useful"], figures["answerable"], "≥ 80 %"))
    print(_rate("wrong (another incident's fact / irrelevant)", figures["wrong"], figures["ran"], "0"))
    print(_rate("junk shown", figures["junk"], figures["ran"], "0"))
    print(_rate("NORMAL", figures["normal"], figures["ran"]))
    print(_rate("NORMAL without a key fact of its incident", figures["normal_without_key_fact"],
                figures["answerable"], "0"))
    print(_rate("answers confirming the question's own words", figures["echoed"], figures["ran"]))
    print(_rate("no-incident questions with nothing confirmed", figures["none_confirmed"],
                figures["unanswerable"], "≥ 95 %"))
    rounds = [seconds for answer, _ in ran for seconds in answer.round_seconds]
    median = bootstrap_median(rounds)
    if median:
        print(f"  {'seconds per round, p50':<44} {median[0]:.1f} s [95 % CI {median[1]:.1f}–{median[2]:.1f}] over "
              f"{len(rounds)} round(s)  (target ≤ 20 s)")
        figures["p50_round_seconds"] = median[0]
    sums = contribution_sums(answers)
    if sums:
        composed = sum(sums.get(f"composer.{status}", 0) for status in ("shown", "replaced", "skipped"))
        print(_rate("answers showing the Composer's own text", sums.get("composer.shown", 0), composed, "≥ 60 %"))
        own, allowed = executor_own_claims(answers)
        print(_rate("allowed claims as the Executor wrote them", own, allowed, "≥ 50 %"))
        print("  contributions (summed over sessions): " + ", ".join(f"{k} {v}" for k, v in sums.items()))
    else:
        print("  contributions: no session recorded any (the audit's `contributions` record is absent)")
    return figures


def plans(questions: Sequence[Any]) -> dict[str, int]:
    """What code plans for each question, without any model (see ``--plans``); prints and returns the counts."""
    from datetime import datetime

    from evigate.demo.catalog import incident_by_id
    from evigate.demo.domain import demo_domain
    from evigate.modules.planner import Planner, decisive_skill
    from evigate.rules.text.spelling import read_names
    from evigate.store import AuditStore

    domain = demo_domain()
    store = AuditStore(Path(tempfile.mkdtemp(prefix="evigate-plans-")) / "evigate.duckdb")
    domain.prepare(store)
    planner = Planner(domain=domain, source=domain.data_source(store))
    figures = {"answerable": 0, "window_named": 0, "window_covers": 0, "decided_by_code": 0, "decided_right": 0,
               "unanswerable": 0, "unanswerable_decided": 0}
    vocabulary = domain.entity_vocabulary()
    for question in questions:
        text = read_names(question.text, vocabulary).read_as  # as the program reads it (misspelt names)
        entities = domain.extract_entities(text)
        decided = decisive_skill(planner.skills, text, domain)
        candidate = None if decided else planner.census(text)
        skill = decided[0].id if decided else candidate.skill.id if candidate else None
        chosen = planner.reading_of(text, decided[1]).get("time_window") if decided else (
            candidate.time_window if candidate else None)  # the census's reading of an ambiguous hour, if any
        window = chosen or entities.get("time_window")
        if question.incident is None:
            figures["unanswerable"] += 1
            figures["unanswerable_decided"] += skill is not None
            print(f"  {question.id:<22} none: skill {skill or '(model)'}, window {window}")
            continue
        incident = incident_by_id(question.incident)
        own = [s.id for s in planner.skills if s.id != "error-code-explain" and incident.error_code in
               " ".join((s.description, s.when_to_use))]
        covers = False
        if window:
            start, _, end = window.partition("/")
            covers = datetime.fromisoformat(start) < incident.end and incident.start < datetime.fromisoformat(end)
        figures["answerable"] += 1
        figures["window_named"] += bool(window)
        figures["window_covers"] += covers
        figures["decided_by_code"] += skill is not None
        figures["decided_right"] += skill in own
        print(f"  {question.id:<22} skill {skill or '(model)'} (runbook {'/'.join(own)}), window {window} "
              f"{'covers' if covers else 'misses' if window else ''}")
    print(f"\nanswerable {figures['answerable']}: a window in {figures['window_named']} (covering the incident in "
          f"{figures['window_covers']}); skill decided by code in {figures['decided_by_code']}, the incident's "
          f"runbook in {figures['decided_right']}; unanswerable {figures['unanswerable']}: decided by code in "
          f"{figures['unanswerable_decided']}")
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("train", "dev", "test", "all"), default="dev")
    parser.add_argument("--locale", choices=("zh", "en", "all"), default="all")
    parser.add_argument("--limit", type=int, default=0, help="first N questions of the selection (0 = all)")
    parser.add_argument("--ids", default="", help="comma-separated question ids (within the split and locale)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="default model (ignored with --settings)")
    parser.add_argument("--settings", default=None, help="a settings YAML instead of the embedded defaults")
    parser.add_argument("--out", default=None, help="per-question JSONL (default: a new file under the temp dir)")
    parser.add_argument("--score", default=None, help="score this JSONL of answers instead of running anything")
    parser.add_argument("--quiet", action="store_true", help="figures only, no per-question lines")
    parser.add_argument("--plans", action="store_true", help="no model: the window and skill code plans")
    parser.add_argument("--compare-compiled", action="store_true",
                        help="ask each question with the shipped compiled program on and off; compare the two")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.score:
        from evigate.errors import DatasetError

        try:
            answers = read_answers(Path(args.score))
        except (OSError, DatasetError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        models = sorted({answer.model for answer in answers if answer.model})
        print(f"scoring {args.score}: {len(answers)} answer(s); model(s): {', '.join(models) or 'unknown'}")
        report(answers, verbose=not args.quiet)
        return 0
    from evigate.datasets.questions import load_questions

    questions = load_questions(split=None if args.split == "all" else args.split,
                               locale=None if args.locale == "all" else args.locale)
    if args.ids:
        wanted = {qid.strip() for qid in args.ids.split(",") if qid.strip()}
        questions = [q for q in questions if q.id in wanted]
    if args.limit:
        questions = questions[: args.limit]
    if not questions:
        parser.error("no question matches that split, locale and id selection")
    if args.plans:
        plans(questions)
        return 0
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="evigate-questions-")) / "answers.jsonl"
    if args.compare_compiled:
        print(f"split {args.split}, locale {args.locale}: {len(questions)} question(s), each asked twice; → {out}")
        return compare_compiled(questions, args.model, args.settings, out)
    print(f"split {args.split}, locale {args.locale}: {len(questions)} question(s); answers → {out}")
    answers = ask(questions, args.model, args.settings, out)
    load = os.getloadavg()
    print(f"model: {answers[0].model if answers else args.model}; load average after {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}")
    report(answers, verbose=not args.quiet)
    print(f"\nanswers: {out}\nrescore: .venv/bin/python bench/questions.py --score {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
