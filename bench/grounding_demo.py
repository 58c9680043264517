"""Grounding on the demo world: code-confirmed labels, the Verifier's F1, the demo's own questions, seconds per round.

What it measures (issue 10 §5, "Demo world" and "The demo's own questions"):

(a) ``f1``: on the labelled demo-world Verifier fixtures (datasets/data/verifier_demo_world.jsonl, 112 cases):
    - code alone, no model, every case: how many claims code confirms (``confirm_by_code``), how many of those gold
      also labels direct_observation (precision), and whether any verdict with code-confirmed labels (gold for the
      rest) is more favourable than the gold verdict (must be 0);
    - with the model (``--f1-limit`` cases, verdict-balanced): claim-level macro-F1 of the Verifier's labels alone
      against code-confirmed labels + caps + the model's labels for the rest, and the wrong-PASS count of each.
      Both come from the same model call per case (the model reads every claim), so the difference is code's.
(b) ``questions``: one question per demo incident (7) in three phrasings (zh, a second zh wording zh2, en), run
    through the real program on the embedded defaults. The confirmed facts an answer states (the Composer input's
    allowed claims the answer contains) are checked against the world: a fact is *correct* when it names a key
    entity of the incident (``world_incidents``: error code, service, anchor order, trace id) and every entity in it
    occurs in the tool outputs of its session; *wrong* when it names an entity found in no output of the session,
    or is a root cause naming a service or error code the incident's ground truth does not involve. Targets: ≥1
    correct confirmed fact in ≥6 of 7 incidents, a wrong one in none, a NORMAL answer in ≥2 of 7. Each phrasing is
    also reported on its own.
(c) seconds per round (p50) over the rounds (b) ran, from the audit's agent_step latencies (Composer excluded, as in
    bench/pipeline.py), split by whether code confirmed every claim so the Verifier model was skipped.

Rerun:  .venv/bin/python bench/grounding_demo.py                       # everything (slow: real model)
        .venv/bin/python bench/grounding_demo.py --part f1 --f1-limit 0 # code-only figures, no model
        .venv/bin/python bench/grounding_demo.py --part questions --phrasings zh --incidents 1,5
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "local/qwen2.5-coder-0.5b"
QUESTIONS: dict[str, dict[str, str]] = {
    "INC-20261128-01": {"zh": "凌晨 2 点多 settlement-service 对账任务很慢，SLOW_SQL 是什么原因？",
                        "zh2": "settlement-service 对账任务 02:10 左右出现 SLOW_SQL，原因是什么？",
                        "en": "Why was the settlement-service reconciliation job slow (SLOW_SQL) around 02:10?"},
    "INC-20261128-02": {"zh": "早上 6 点多短信发送失败，ERR_SMS_PROVIDER 是怎么回事？",
                        "zh2": "notification-service 06:10 起报 ERR_SMS_PROVIDER，短信发不出去，为什么？",
                        "en": "Why did notification-service fail to send SMS with ERR_SMS_PROVIDER around 06:10?"},
    "INC-20261128-03": {"zh": "订单 456 支付失败，ERR_DB_POOL_EXHAUSTED 是什么原因？",
                        "zh2": "payment-service 报 ERR_DB_POOL_EXHAUSTED，订单 456 付款失败，怎么回事？",
                        "en": "Order 456 payment failed with ERR_DB_POOL_EXHAUSTED. Why?"},
    "INC-20261128-04": {"zh": "订单 789 下单失败，报 ERR_DEADLOCK，是什么原因？",
                        "zh2": "inventory-service 扣库存时订单 789 出现 ERR_DEADLOCK，原因？",
                        "en": "Order 789 failed with ERR_DEADLOCK. What happened?"},
    "INC-20261128-05": {"zh": "订单 123 支付失败，ERR_TIMEOUT 是什么原因？",
                        "zh2": "pay-gateway 返回 ERR_TIMEOUT，订单 123 没付成功，为什么？",
                        "en": "Why did the payment of order 123 fail with ERR_TIMEOUT?"},
    "INC-20261128-06": {"zh": "订单 2024 被拒绝，返回 429 ERR_RATE_LIMITED，为什么？",
                        "zh2": "api-gateway 对订单 2024 返回 HTTP 429（ERR_RATE_LIMITED），是什么引起的？",
                        "en": "Order 2024 was rejected with HTTP 429 ERR_RATE_LIMITED. Why?"},
    "INC-20261128-07": {"zh": "晚上 8 点订单 3141 报 ERR_UPSTREAM_TIMEOUT，商品详情很慢，是什么原因？",
                        "zh2": "product-service 商品详情变慢，订单 3141 报 ERR_UPSTREAM_TIMEOUT，原因是什么？",
                        "en": "Around 20:00 order 3141 failed with ERR_UPSTREAM_TIMEOUT, product pages slow. Why?"},
}


# -- (a) F1 on the labelled fixtures ----------------------------------------------------------------------------------


def code_only_figures() -> dict[str, float]:
    """Code's confirmed labels against gold on every demo-world case, and the never-more-favourable check."""
    from evigate.datasets import load_verifier_cases
    from evigate.optimize.verifier_metric import GateCache
    from evigate.rules import decide_verdict
    from evigate.signatures import ClaimCheck

    order = {"REJECT": 0, "LOW_CONFID": 1, "PASS": 2}
    gates = GateCache()
    confirmed = right = direct_gold = claims = more_favourable = cases = 0
    for case in load_verifier_cases(["demo_world"]):
        cases += 1
        gate, status = gates.outcome(case)
        code = gates.code_judgement(case) if status == "valid" else None
        checks = [ClaimCheck(claim_id=k, verification=v) for k, v in case.gold_labels.items()]
        decision = decide_verdict(gate.normalized, checks, gate.result, status, gates.gatekeeper.verdict_impacts,
                                  failed_claims=gate.failed_claims, excluded_claims=gate.excluded_claims,
                                  code_checks=code.confirmed if code else None)
        more_favourable += order[decision.verdict] > order[case.gold_verdict]
        claims += len(case.gold_labels)
        direct_gold += sum(label == "direct_observation" for label in case.gold_labels.values())
        for claim_id in (code.confirmed if code else {}):
            confirmed += 1
            right += case.accepts(claim_id, "direct_observation")
    return {"cases": cases, "claims": claims, "gold_direct": direct_gold, "code_confirmed": confirmed,
            "code_confirmed_correct": right, "more_favourable_than_gold": more_favourable}


def model_f1(model: str, limit: int | None) -> tuple[Any, Any, float]:
    """(code+model summary, model-alone summary, seconds) of the Verifier on ``limit`` demo-world cases."""
    import dspy

    from evigate.llm.adapter import adapter_for
    from evigate.modules.verifier import Verifier
    from evigate.optimize.data import load_agent_data, resolve_lm
    from evigate.optimize.evaluation import evaluate_agent

    lm, _ = resolve_lm("verifier", model, None)
    data = load_agent_data("verifier", ("demo_world",), limit, splits=("dev", "test"))
    examples = data.splits["dev"] + data.splits["test"]
    if limit:
        examples = examples[:limit]
    with dspy.context(lm=lm, adapter=adapter_for(lm)):
        result = evaluate_agent("verifier", Verifier(), examples, label="demo_world")
    return result.summary, result.model_alone, result.seconds


# -- (b) the demo's own questions -------------------------------------------------------------------------------------


@dataclass
class Asked:
    incident: str
    locale: str
    query: str
    output_type: str = ""
    verdict: str = ""
    seconds: float = 0.0
    correct: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    round_seconds: list[tuple[float, bool]] = field(default_factory=list)
    error: str | None = None


def ask_all(model: str, incidents: Sequence[str], locales: Sequence[str]) -> list[Asked]:
    """Each question through a fresh program on the embedded defaults (one DuckDB world for all)."""
    from evigate.demo.catalog import incident_by_id
    from evigate.modules.program import DiagnosisProgram
    from evigate.optimize.world_facts import confirmed_facts

    workdir = Path(tempfile.mkdtemp(prefix="evigate-grounding-"))
    program = DiagnosisProgram.from_settings(database=workdir / "evigate.duckdb", models={"default": model})
    print(f"  audit of these sessions (kept for `evigate show --database …`): {workdir / 'evigate.duckdb'}")
    asked: list[Asked] = []
    for incident_id in incidents:
        incident = incident_by_id(incident_id)
        for phrasing in locales:
            item = Asked(incident_id, phrasing, QUESTIONS[incident_id][phrasing])
            program.settings.locale = phrasing[:2]  # zh2 is a second Chinese wording, answered in Chinese
            began = time.perf_counter()
            try:
                result = program(query=item.query)
            except Exception as exc:  # one failed question is a figure, not the end of the benchmark
                item.error = f"{type(exc).__name__}: {exc}"
                asked.append(item)
                continue
            item.seconds = time.perf_counter() - began
            item.output_type, item.verdict = result.output_type, result.verdict
            item.correct, item.wrong = confirmed_facts(program.store, result.session_id, result.answer, incident)
            item.round_seconds = _round_seconds(program.store, result.session_id)
            asked.append(item)
            print(f"  {incident_id} {phrasing}: {item.output_type} {item.verdict} {item.seconds:.0f}s "
                  f"correct {len(item.correct)} wrong {len(item.wrong)}", flush=True)
    return asked


def _round_seconds(store: Any, session_id: str) -> list[tuple[float, bool]]:
    from evigate.modules.rounds import VERIFIER_SKIPPED

    per_round: dict[int, float] = {}
    verifier_rounds: set[int] = set()
    for step in store.steps(session_id):
        if step["agent"] == "composer":
            continue
        per_round[step["round"]] = per_round.get(step["round"], 0.0) + (step["latency_ms"] or 0) / 1000
        if step["agent"] == "verifier" and not str(step["thought"]).startswith(VERIFIER_SKIPPED):
            verifier_rounds.add(step["round"])
    return [(seconds, number not in verifier_rounds) for number, seconds in sorted(per_round.items())]


def report_questions(asked: list[Asked]) -> None:
    by_incident: dict[str, list[Asked]] = {}
    for item in asked:
        by_incident.setdefault(item.incident, []).append(item)
    with_correct = sum(any(a.correct for a in items) for items in by_incident.values())
    with_wrong = sum(any(a.wrong for a in items) for items in by_incident.values())
    normal = sum(any(a.output_type == "NORMAL" for a in items) for items in by_incident.values())
    total = len(by_incident)
    print(f"\n(b) demo questions: {len(asked)} asked over {total} incident(s)")
    for item in asked:
        state = item.error or f"{item.output_type} ({item.verdict}) in {item.seconds:.0f} s"
        print(f"  {item.incident} [{item.locale}] {state}; correct facts {len(item.correct)}, wrong {len(item.wrong)}")
        for fact in item.correct[:2]:
            print(f"      ✓ {fact[:110]}")
        for fact in item.wrong[:2]:
            print(f"      ✗ {fact[:110]}")
    print(f"  incidents with ≥1 correct confirmed fact: {with_correct}/{total} in some phrasing (target ≥6 of 7)")
    print(f"  incidents with a wrong confirmed fact:    {with_wrong}/{total} (target 0)")
    print(f"  incidents with a NORMAL answer:          {normal}/{total} (target ≥2 of 7)")
    phrasings = list(dict.fromkeys(item.locale for item in asked))
    for phrasing in phrasings:
        own = [item for item in asked if item.locale == phrasing]
        print(f"  phrasing {phrasing}: correct fact {sum(bool(a.correct) for a in own)}/{len(own)}, "
              f"wrong {sum(bool(a.wrong) for a in own)}/{len(own)}, "
              f"NORMAL {sum(a.output_type == 'NORMAL' for a in own)}/{len(own)}")
    if len(phrasings) > 1:
        every = sum(all(a.correct for a in items) for items in by_incident.values())
        print(f"  incidents with a correct fact in every phrasing: {every}/{total}")
    rounds = [pair for item in asked for pair in item.round_seconds]
    if rounds:
        skipped = [s for s, skip in rounds if skip]
        called = [s for s, skip in rounds if not skip]
        print(f"\n(c) seconds per round: p50 {statistics.median(s for s, _ in rounds):.1f} s over {len(rounds)} "
              f"round(s) (target ≤ 20 s on an idle 2-core machine)")
        if skipped:
            print(f"    rounds where code decided every claim (Verifier skipped): {len(skipped)}, "
                  f"p50 {statistics.median(skipped):.1f} s")
        if called:
            print(f"    rounds that called the Verifier model: {len(called)}, p50 {statistics.median(called):.1f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("f1", "questions", "all"), default="all")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--f1-limit", type=int, default=12, help="demo-world cases the model labels (0 = none)")
    parser.add_argument("--incidents", default="1,2,3,4,5,6,7", help="incident numbers, e.g. 1,5")
    parser.add_argument("--phrasings", default="zh,zh2,en",
                        help="phrasings of the questions: zh, zh2 (a second Chinese wording), en")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"model: {args.model}; {os.cpu_count()} cores; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.part in ("f1", "all"):
        figures = code_only_figures()
        print(f"\n(a) code alone on {figures['cases']} demo-world cases, {figures['claims']} claims "
              f"({figures['gold_direct']} gold direct_observation): code confirmed {figures['code_confirmed']}, "
              f"{figures['code_confirmed_correct']} of them gold direct_observation; verdicts more favourable than "
              f"gold with code-confirmed labels: {figures['more_favourable_than_gold']}")
        if args.f1_limit:
            combined, alone, seconds = model_f1(args.model, args.f1_limit)
            print(f"    Verifier on {combined.count} cases ({seconds:.0f} s): claim macro-F1 model alone "
                  f"{alone.claim_macro_f1:.3f}, code-confirmed + caps + model {combined.claim_macro_f1:.3f}; "
                  f"wrong PASS {alone.wrong_pass_count} → {combined.wrong_pass_count} "
                  f"(rate {combined.wrong_pass_rate:.3f}); verdict accuracy {combined.verdict_accuracy:.3f}")
    if args.part in ("questions", "all"):
        incidents = [f"INC-20261128-{int(n):02d}" for n in args.incidents.split(",") if n.strip()]
        locales = [phrasing for phrasing in args.phrasings.split(",") if phrasing in ("zh", "zh2", "en")]
        report_questions(ask_all(args.model, incidents, locales))
    print(f"\nrerun: .venv/bin/python bench/grounding_demo.py --part {args.part} --f1-limit {args.f1_limit} "
          f"--incidents {args.incidents} --phrasings {args.phrasings}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
