"""Build the generated part of the Composer set from the demo-world Verifier cases and their gold labels.

``python -m evigate.datasets.build_composer_fixtures``

For a chosen set of Verifier variants the gold claim labels stand in for a perfect Verifier; code then decides the
verdict (``decide_verdict``) and assembles the §19.2.1 Composer input (``build_composer_input``), exactly as the
program would. What the answer must and must not contain follows from the labels:

* must contain — per allowed claim, its first key entity (error code, identifier, service name), so every
  confirmed fact is actually reported;
* must not contain — every key entity of a claim the Verifier did NOT allow (external_unknown, contradicted,
  unsupported, forged evidence …) that appears nowhere in the Composer input: an answer naming it repeats a
  rejected statement (§21 stage 5: "Composer 输入不含某错误码但输出包含该错误码").

Files are written as ``data/composer/gen-<case>.yaml`` (one case each). Hand-written cases live beside them as
``hand-*.yaml`` and are never touched by this script.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from evigate.datasets.fixtures import ComposerCase, VerifierCase
from evigate.datasets.loaders import COMPOSER_FIXTURES, load_verifier_cases

SOURCE_VARIANTS = (
    "clean", "inference", "overstated", "unsupported", "mixed", "hypothesis_as_root_cause", "external_unknown",
    "contradicted", "forged_invocation_id", "injected_root_cause",
)
MUST_KINDS = ("error_code", "identifier", "service")
MAX_MUST_GROUPS = 3


def composer_case(case: VerifierCase) -> ComposerCase:
    """The Composer case a perfect Verifier would produce from this Verifier case."""
    from evigate.rules import Gatekeeper, build_composer_input, decide_verdict, parse_executor_output
    from evigate.rules.text.entities import extract_entities
    from evigate.signatures import ClaimCheck, VerifierOutput

    gatekeeper = Gatekeeper.default()
    parsed = parse_executor_output(case.verifier_input.executor_raw_output)
    gate = gatekeeper.validate(parsed, case.invocations, case.session_id,
                               trace_summary=case.verifier_input.tool_trace_summary)
    checks = [ClaimCheck(claim_id=claim_id, verification=label, detail=case.notes.get(claim_id, ""))
              for claim_id, label in case.gold_labels.items()]
    decision = decide_verdict(gate.normalized, checks, gate.result, parsed.status, gatekeeper.verdict_impacts,
                              failed_claims=gate.failed_claims, excluded_claims=gate.excluded_claims)
    verifier_output = VerifierOutput(verdict=decision.verdict, claim_checks=checks,
                                     rationale=_rationale(decision.verdict))
    composer_input = build_composer_input(case.verifier_input.original_query, gate.normalized, verifier_output,
                                          decision)
    material = composer_input.model_dump_json()
    must: list[list[str]] = []
    for allowed in composer_input.allowed_claims:
        key = next((e.text for e in extract_entities(allowed.claim_text) if e.kind in MUST_KINDS), None)
        if key and [key] not in must and len(must) < MAX_MUST_GROUPS:
            must.append([key])
    allowed_ids = {claim.claim_id for claim in composer_input.allowed_claims}
    must_not: list[str] = []
    for claim in gate.normalized.get("claims", []):
        if claim.get("claim_id") in allowed_ids:
            continue
        for entity in extract_entities(claim.get("claim_text", "")):
            if entity.is_key_value and entity.text not in material and entity.text not in must_not:
                must_not.append(entity.text)
    return ComposerCase(
        case_id=case.case_id.replace("dw-", "cmp-", 1),
        split=case.split,
        tags=["generated", f"verdict:{decision.verdict}", *case.tags[1:]],
        notes={"source": f"derived from Verifier case {case.case_id} with its gold labels"},
        composer_input=composer_input,
        must_contain=must,
        must_not_contain=must_not,
    )


def _rationale(verdict: str) -> str:
    return {
        "PASS": "关键事实均有直接证据支撑。",
        "LOW_CONFID": "部分结论缺少直接证据，仍有证据缺口。",
        "REJECT": "存在与证据冲突或无法核实的关键结论。",
    }[verdict]


def build(out_dir: Path = COMPOSER_FIXTURES) -> list[ComposerCase]:
    """Regenerate every ``gen-*.yaml`` under ``out_dir``; returns the cases written."""
    cases = [composer_case(case) for case in load_verifier_cases(["demo_world"])
             if len(case.tags) > 1 and case.tags[1] in SOURCE_VARIANTS]
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("gen-*.yaml"):
        stale.unlink()
    for case in cases:
        data: dict[str, Any] = case.model_dump(mode="json", exclude_defaults=True)
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=120)
        (out_dir / f"gen-{case.case_id}.yaml").write_text(text, encoding="utf-8")
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(COMPOSER_FIXTURES))
    args = parser.parse_args(argv)
    cases = build(Path(args.out))
    by_verdict: dict[str, int] = {}
    for case in cases:
        by_verdict[case.composer_input.verdict] = by_verdict.get(case.composer_input.verdict, 0) + 1
    print(f"{len(cases)} generated Composer cases -> {args.out}: {dict(sorted(by_verdict.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
