"""Build the generated part of the Composer set from the demo-world Verifier cases and their gold labels.

``python -m evigate.datasets.build_composer_fixtures``

For a chosen set of Verifier variants the gold claim labels stand in for a perfect Verifier; code then decides the
verdict (``decide_verdict``) and assembles the §19.2.1 Composer input (``build_composer_input``), exactly as the
program would. What the answer must and must not contain follows from the labels:

* must contain — per allowed claim, its first key entity (error code, identifier, service name; not the name of
  the tool a code observation cites, nor a field name before "="), so every confirmed fact is actually reported;
* must not contain — every key entity of a claim the Verifier did NOT allow (external_unknown, contradicted,
  unsupported, forged evidence …) that appears nowhere in the Composer input: an answer naming it repeats a
  rejected statement (§21 stage 5: "Composer 输入不含某错误码但输出包含该错误码").

Files are written as ``data/composer/gen-<case>.yaml`` (one case each). Hand-written cases live beside them as
``hand-*.yaml`` and are never touched by this script.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import yaml

from evigate.datasets.fixtures import ComposerCase, VerifierCase
from evigate.datasets.loaders import COMPOSER_FIXTURES, load_verifier_cases
from evigate.datasets.questions import Question
from evigate.signatures import ComposerInput

SOURCE_VARIANTS = (
    "clean", "inference", "overstated", "unsupported", "mixed", "hypothesis_as_root_cause", "external_unknown",
    "contradicted", "forged_invocation_id", "injected_root_cause",
)
MUST_KINDS = ("error_code", "identifier", "service")
MAX_MUST_GROUPS = 3
# A claim code observed reads "<tool>[（subject）] 返回：<line>" (rules/verdict/junk_claims.py): its tool's name says
# where the fact came from, not the fact, so it is no key entity an answer must repeat.
_TOOL_ATTRIBUTION = re.compile(r"^\s*([A-Za-z][\w\-]*)\s*(?:[（(][^（）()]*[）)])?\s*(?:返回|returned)\s*[：:]")


def composer_case(case: VerifierCase) -> ComposerCase:
    """The Composer case a perfect Verifier would produce from this Verifier case."""
    from evigate.rules import Gatekeeper, build_composer_input, decide_verdict, parse_executor_output
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
    rejected = [claim.get("claim_text", "") for claim in gate.normalized.get("claims", [])
                if claim.get("claim_id") not in {allowed.claim_id for allowed in composer_input.allowed_claims}]
    must, must_not = _must_contain(composer_input), _absent_keys(rejected, material)
    return ComposerCase(
        case_id=case.case_id.replace("dw-", "cmp-", 1),
        split=case.split,
        tags=["generated", f"verdict:{decision.verdict}", *case.tags[1:]],
        notes={"source": f"derived from Verifier case {case.case_id} with its gold labels"},
        composer_input=composer_input,
        must_contain=must,
        must_not_contain=must_not,
    )


def _must_contain(composer_input: ComposerInput) -> list[list[str]]:
    """Per allowed claim, its first key entity (error code, identifier, service), at most MAX_MUST_GROUPS."""
    from evigate.rules.text.entities import extract_entities

    must: list[list[str]] = []
    for allowed in composer_input.allowed_claims:
        key = next((e.text for e in extract_entities(allowed.claim_text)
                    if e.kind in MUST_KINDS and _names_fact(e.text, allowed.claim_text)), None)
        if key and [key] not in must and len(must) < MAX_MUST_GROUPS:
            must.append([key])
    return must


def _names_fact(entity: str, claim_text: str) -> bool:
    """Whether ``entity`` names something in the claim rather than its source tool or a field ("error_code=…")."""
    tool = _TOOL_ATTRIBUTION.match(claim_text)
    if tool and entity == tool.group(1):
        return False
    return re.search(rf"{re.escape(entity)}(?!\s*=)", claim_text) is not None


def _absent_keys(texts: list[str], material: str) -> list[str]:
    """Every key entity of ``texts`` that the Composer input (``material``) does not hold: naming it is a fault."""
    from evigate.rules.text.entities import extract_entities

    must_not: list[str] = []
    for text in texts:
        for entity in extract_entities(text):
            if entity.is_key_value and entity.text not in material and entity.text not in must_not:
                must_not.append(entity.text)
    return must_not


def bank_case(question: Question, composer_input: ComposerInput) -> ComposerCase:
    """The Composer case of one question of the bank, from its code-only session's Composer input.

    Must contain follows the rule of the Verifier-derived cases; must not contain is every key entity of the other
    demo incidents (all of them for a question no incident answers) that the Composer input does not hold.
    """
    from evigate.demo.catalog import INCIDENTS, key_entities

    others = [" ".join(key_entities(incident)) for incident in INCIDENTS if incident.incident_id != question.incident]
    return ComposerCase(
        case_id=f"bank-{question.id}",
        split=question.split,
        tags=["bank", f"verdict:{composer_input.verdict}", question.incident or "no-incident", question.locale,
              question.family],
        notes={"source": f"code-only session of question {question.id} of the question bank"},
        composer_input=composer_input,
        must_contain=_must_contain(composer_input),
        must_not_contain=_absent_keys(others, composer_input.model_dump_json()),
    )


def _rationale(verdict: str) -> str:
    return {
        "PASS": "关键事实均有直接证据支撑。",
        "LOW_CONFID": "部分结论缺少直接证据，仍有证据缺口。",
        "REJECT": "存在与证据冲突或无法核实的关键结论。",
    }[verdict]


def case_text(case: ComposerCase) -> str:
    """The YAML file of one generated case (the committed form; rebuilding must give it byte for byte)."""
    data: dict[str, Any] = case.model_dump(mode="json", exclude_defaults=True)
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=120)


def bank_cases(questions: list[Question] | None = None) -> list[ComposerCase]:
    """The bank's Composer cases (every question, or those given), from code-only sessions over a fresh world."""
    from evigate.datasets.codeonly_sessions import codeonly_composer_inputs

    return [bank_case(question, composer_input) for question, composer_input in codeonly_composer_inputs(questions)]


def build(out_dir: Path = COMPOSER_FIXTURES) -> list[ComposerCase]:
    """Regenerate every ``gen-*.yaml`` and ``bank-*.yaml`` under ``out_dir``; returns the cases written."""
    cases = [composer_case(case) for case in load_verifier_cases(["demo_world"])
             if len(case.tags) > 1 and case.tags[1] in SOURCE_VARIANTS]
    banked = bank_cases()
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in [*out_dir.glob("gen-*.yaml"), *out_dir.glob("bank-*.yaml")]:
        stale.unlink()
    for case in cases:
        (out_dir / f"gen-{case.case_id}.yaml").write_text(case_text(case), encoding="utf-8")
    for case in banked:
        (out_dir / f"{case.case_id}.yaml").write_text(case_text(case), encoding="utf-8")
    return [*cases, *banked]


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
