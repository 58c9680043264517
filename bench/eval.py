"""Calibrate the Verifier and Composer metrics on the fixture sets, and optionally score a real model.

What it measures (no LM needed unless ``--model`` is given), per set and split:

* reference Verifiers — ``oracle`` (gold labels), ``gullible`` (every claim direct_observation, verdict PASS),
  ``cautious`` (every claim unsupported), ``silent`` (no checks at all), ``random`` (seeded) — scored with the same
  metric the optimizers use, so a model's figures can be read against the floor and the ceiling;
* the metric's own cost (ms per case: Gatekeeper re-run + decide_verdict + scoring);
* with ``--model MODEL``, that model's Verifier on ``--limit`` examples per split (what ``evigate eval`` runs,
  without MLflow).

Rerun: ``/work/venv/bin/python bench/eval.py [--sets demo_world,holmesgpt] [--model local/qwen2.5-coder-0.5b
--limit 3]``
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy

from evigate.datasets import VerifierCase, load_composer_cases, load_verifier_cases
from evigate.optimize.composer_metric import score_composer, summarize_composer
from evigate.optimize.verifier_metric import (
    VERDICTS,
    VERIFICATIONS,
    GateCache,
    score_verifier,
    summarize_verifier,
)
from evigate.signatures import ClaimCheck, ComposerOutput, VerifierOutput

Policy = Callable[[VerifierCase], dspy.Prediction]


def _prediction(labels: dict[str, str], verdict: str) -> dspy.Prediction:
    checks = [ClaimCheck(claim_id=claim_id, verification=label) for claim_id, label in labels.items()]
    return dspy.Prediction(verifier_output=VerifierOutput(verdict=verdict, claim_checks=checks))


def reference_policies(seed: int = 0) -> dict[str, Policy]:
    rng = random.Random(seed)
    return {
        "oracle": lambda case: _prediction(case.gold_labels, case.gold_verdict),
        "gullible": lambda case: _prediction(dict.fromkeys(case.gold_labels, "direct_observation"), "PASS"),
        "cautious": lambda case: _prediction(dict.fromkeys(case.gold_labels, "unsupported"), "LOW_CONFID"),
        "silent": lambda case: dspy.Prediction(),
        "random": lambda case: _prediction(
            {c: rng.choice(VERIFICATIONS) for c in case.gold_labels}, rng.choice(VERDICTS)
        ),
    }


def _row(name: str, summary, seconds: float, count: int) -> str:
    return (
        f"{name:<10} n={summary.count:<4} score={summary.mean_score:+.3f} macroF1={summary.claim_macro_f1:.3f} "
        f"verdict_acc={summary.verdict_accuracy:.3f} wrong_PASS={summary.wrong_pass_count:<3} "
        f"metric {1000 * seconds / max(count, 1):.1f} ms/case"
    )


def bench_verifier(sets: list[str], model: str | None, limit: int | None) -> None:
    gates = GateCache()
    for source in sets:
        for split in ("train", "dev", "test"):
            cases = load_verifier_cases([source], split)
            print(f"\n[{source} / {split}] {len(cases)} cases, {sum(len(c.gold_labels) for c in cases)} claims")
            for name, policy in reference_policies().items():
                started = time.perf_counter()
                scores = [score_verifier(case, policy(case), gates) for case in cases]
                print("  " + _row(name, summarize_verifier(scores), time.perf_counter() - started, len(cases)))
            if model and split != "train":
                _bench_model(model, cases[:limit] if limit else cases, gates)


def _bench_model(model: str, cases: list[VerifierCase], gates: GateCache) -> None:
    from evigate.llm import lm_from_settings
    from evigate.modules.verifier import Verifier
    from evigate.settings import load_settings

    # The Verifier's LM exactly as `evigate ask` builds it (server, key, budget, decoding limits), with this model.
    verifier, lm = Verifier(), lm_from_settings(load_settings(), "verifier", model=model)
    scores = []
    started = time.perf_counter()
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        for case in cases:
            try:
                prediction, error = verifier(verifier_input=case.verifier_input), None
            except Exception as exc:  # a failed call is scored as an empty prediction
                prediction, error = dspy.Prediction(), f"{type(exc).__name__}"
            scores.append(score_verifier(case, prediction, gates, error=error))
    elapsed = time.perf_counter() - started
    summary = summarize_verifier(scores)
    print(
        f"  {model}: "
        + _row("model", summary, 0.0, len(cases)).split("metric")[0]
        + f"errors={summary.errors} {elapsed / max(len(cases), 1):.0f} s/call"
    )


def bench_composer() -> None:
    cases = load_composer_cases()
    print(f"\n[composer] {len(cases)} cases")
    echo = {}
    for case in cases:  # echo the allowed claims: a lazy but safe Composer
        text = "".join(claim.claim_text for claim in case.composer_input.allowed_claims) or "暂无已确认信息。"
        echo[case.case_id] = dspy.Prediction(
            composer_output=ComposerOutput(answer_summary=text[:80], user_facing_answer=text)
        )
    started = time.perf_counter()
    summary = summarize_composer([score_composer(case, echo[case.case_id]) for case in cases])
    ms = 1000 * (time.perf_counter() - started) / len(cases)
    print(
        f"  echo-claims score={summary.mean_score:.3f} clean={summary.clean_rate:.3f} "
        f"coverage={summary.mean_coverage:.3f} expression={summary.mean_expression:.3f} "
        f"by verdict={ {k: round(v, 3) for k, v in summary.by_verdict.items()} } metric {ms:.1f} ms/case"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="demo_world,holmesgpt")
    parser.add_argument("--model", help="also score this model's Verifier on dev and test")
    parser.add_argument("--limit", type=int, default=3, help="examples per split for --model")
    args = parser.parse_args()
    print("Verifier metric: per-case 0.5*claim accuracy + 0.5*(code verdict == gold), -1 on a wrong PASS")
    bench_verifier([s for s in args.sets.split(",") if s], args.model, args.limit)
    bench_composer()


if __name__ == "__main__":
    main()
