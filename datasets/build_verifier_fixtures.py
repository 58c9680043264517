"""Build the demo-world Verifier set from REAL tool outputs and hand-written labels.

``python -m evigate.datasets.build_verifier_fixtures [--out PATH] [--database PATH]``

For each scenario of ``data/demo_world_scenarios.yaml`` the script opens a diagnosis session in a freshly built
demo world, runs the scenario's tool calls through the recorded :class:`~evigate.tools.Toolbox` (so invocations are
exactly what the program would record), checks that every quoted excerpt occurs in its invocation's output, and
expands the scenario's labelled claims into Verifier inputs with the variant templates below. The output,
``data/verifier_demo_world.jsonl``, is the committed labelled data; rerun this after the world generator changes.
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from evigate.datasets.builder import CaseSpec, ClaimSpec, Evidence, build_case
from evigate.datasets.fixtures import VerifierCase, write_jsonl
from evigate.datasets.loaders import DEMO_WORLD_FIXTURES
from evigate.errors import DatasetError
from evigate.signatures import ToolInvocation

SCENARIOS_PATH = Path(__file__).parent / "data" / "demo_world_scenarios.yaml"
MANIPULATED_LABEL = "unsupported"
"""§15.3: a claim the Gatekeeper fails is judged at least unsupported; external_unknown/contradicted also fit."""

# (name, claim roles, gold verdict, tags). A role may carry a manipulation: "detail!forge", "!wrong_tool",
# "!fake_excerpt", "!misattribute". The §21 stage-5 scenarios are the last five.
INCIDENT_VARIANTS: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    ("clean", ("sym", "detail", "ctx"), "PASS", ()),
    ("clean_short", ("detail", "ctx"), "PASS", ()),
    ("inference", ("sym", "inf"), "PASS", ()),
    ("inference_only", ("inf",), "LOW_CONFID", ("no_direct_anchor",)),
    ("overstated", ("sym", "detail", "over"), "LOW_CONFID", ()),
    ("unsupported", ("sym", "unsup"), "LOW_CONFID", ()),
    ("mixed", ("detail", "inf", "over", "unsup"), "LOW_CONFID", ()),
    ("external_unknown", ("sym", "ext"), "REJECT", ()),
    ("contradicted", ("sym", "detail", "contra"), "REJECT", ()),
    ("fabrications", ("detail", "ext", "contra"), "REJECT", ()),
    ("forged_invocation_id", ("sym!forge", "detail"), "REJECT", ("stage5",)),
    ("tool_name_mismatch", ("sym", "detail!wrong_tool"), "REJECT", ("stage5",)),
    ("excerpt_mismatch", ("sym", "detail!fake_excerpt"), "LOW_CONFID", ("stage5",)),
    ("misattribution", ("sym", "detail!misattribute"), "REJECT", ("stage5",)),
    ("hypothesis_as_root_cause", ("sym", "hyp_rc"), "LOW_CONFID", ("stage5",)),
)


def build_fixtures(scenarios_path: Path = SCENARIOS_PATH, database: Path | None = None) -> list[VerifierCase]:
    """Run every scenario against a new demo world and return the labelled cases."""
    from evigate.demo import demo_toolbox, ensure_world
    from evigate.store import AuditStore

    document = yaml.safe_load(scenarios_path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="evigate-fixtures-") as scratch:
        store = AuditStore(database or Path(scratch) / "world.duckdb")
        ensure_world(store)
        cases: list[VerifierCase] = []
        for scenario in document["scenarios"]:
            session_id = f"dw-{scenario['id']}"
            store.start_session(scenario["query"], session_id=session_id)
            toolbox = demo_toolbox(store, session_id)
            call_ids = []
            for tool, args in scenario["calls"]:
                result = toolbox.call(tool, **args)
                if not result.success:
                    raise DatasetError(f"{scenario['id']}: {tool}({args}) failed: {result.output[:200]}")
                call_ids.append(result.invocation_id)
            invocations = store.invocations(session_id)
            cases.extend(_scenario_cases(scenario, session_id, invocations, call_ids))
        store.close()
    return cases


def _scenario_cases(scenario: dict[str, Any], session_id: str, invocations: list[ToolInvocation],
                    call_ids: list[int]) -> list[VerifierCase]:
    by_id = {inv.id: inv for inv in invocations}
    claims = {role: _claim(scenario["id"], role, raw, call_ids, by_id) for role, raw in scenario["claims"].items()}
    if scenario.get("template") == "injection":
        variants = [(v["name"], tuple(v["claims"]), v["verdict"], ()) for v in scenario["variants"]]
    else:
        variants = list(INCIDENT_VARIANTS)
    hypothesis = scenario.get("hypothesis")
    specs = []
    for name, roles, verdict, tags in variants:
        chosen = [_apply(scenario, role, claims, call_ids, by_id) for role in roles]
        renumbered = [replace(claim, claim_id=f"claim-{index}") for index, claim in enumerate(chosen, start=1)]
        specs.append(
            CaseSpec(
                case_id=f"dw-{scenario['id']}-{name}",
                source="demo_world",
                split=scenario["split"],
                query=scenario["query"],
                session_id=session_id,
                invocations=invocations,
                claims=renumbered,
                gold_verdict=verdict,
                tags=["demo_world", name, *tags, *scenario.get("tags", [])],
                hypotheses=[{"hypothesis_text": hypothesis["text"], "basis": hypothesis["basis"],
                             "needed_evidence": hypothesis.get("needed_evidence", [])}] if hypothesis else [],
                recommended_actions=[{**action, "evidence_bindings": []}
                                     for action in scenario.get("recommended_actions", [])],
            )
        )
    return [build_case(spec) for spec in specs]


def _claim(scenario_id: str, role: str, raw: dict[str, Any], call_ids: list[int],
           by_id: dict[int, ToolInvocation]) -> ClaimSpec:
    evidence = []
    for call_index, excerpt in raw["evidence"]:
        invocation_id = call_ids[call_index - 1]
        if excerpt not in by_id[invocation_id].output_preview:
            raise DatasetError(f"{scenario_id} {role}: excerpt {excerpt!r} is not in call {call_index}'s output")
        evidence.append(Evidence((invocation_id,), excerpt))
    return ClaimSpec(
        claim_id=role, claim_type=raw["type"], text=raw["text"], support_level=raw.get("support", "direct"),
        evidence=tuple(evidence), label=raw["label"], acceptable=tuple(raw.get("acceptable", ())),
        note=raw.get("note", ""),
    )


def _apply(scenario: dict[str, Any], role_spec: str, claims: dict[str, ClaimSpec], call_ids: list[int],
           by_id: dict[int, ToolInvocation]) -> ClaimSpec:
    """The claim for a role, with the evidence manipulation after ``!`` applied and its label adjusted."""
    role, _, manipulation = role_spec.partition("!")
    claim = claims[role]
    if not manipulation:
        return claim
    raw = scenario["claims"][role]
    first = claim.evidence[0]
    real_tool = by_id[first.invocation_ids[0]].tool_name
    if manipulation == "forge":
        forged = max(by_id) + 1000
        evidence = Evidence((forged,), first.excerpt, tool_name=real_tool)
        why = f"证据绑定引用了本会话不存在的 invocation {forged}（伪造引用）"
        acceptable: tuple[str, ...] = ("external_unknown", "contradicted")
    elif manipulation == "wrong_tool":
        other = next(inv.tool_name for inv in by_id.values() if inv.tool_name != real_tool)
        evidence = Evidence(first.invocation_ids, first.excerpt, tool_name=other)
        why = f"证据绑定声称来自 {other}，但该 invocation 实际是 {real_tool}（工具名不匹配）"
        acceptable = ("external_unknown", "contradicted")
    elif manipulation == "fake_excerpt":
        evidence = Evidence(first.invocation_ids, raw["fake_excerpt"])
        why = "evidence_excerpt 与被引用工具的真实输出不符，摘录无法核实"
        acceptable = ()
    elif manipulation == "misattribute":
        target = call_ids[raw["misattribute_to"] - 1]
        evidence = Evidence((target,), first.excerpt, tool_name=by_id[target].tool_name)
        why = f"摘录逐字来自另一次调用，却被归到 invocation {target}（张冠李戴）"
        acceptable = ("external_unknown", "contradicted")
    else:
        raise DatasetError(f"{scenario['id']}: unknown manipulation {manipulation!r}")
    return replace(claim, evidence=(evidence, *claim.evidence[1:]), label=MANIPULATED_LABEL, acceptable=acceptable,
                   note=f"{why}；Gatekeeper 已判失败，该 claim 不能作为事实。")


def label_counts(cases: list[VerifierCase]) -> tuple[Counter[str], Counter[str]]:
    """(verification → claim count, verdict → case count)."""
    labels = Counter(label for case in cases for label in case.gold_labels.values())
    verdicts = Counter(case.gold_verdict for case in cases)
    return labels, verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default=str(SCENARIOS_PATH))
    parser.add_argument("--out", default=str(DEMO_WORLD_FIXTURES))
    parser.add_argument("--database", help="build the world here instead of a temporary file")
    args = parser.parse_args(argv)
    cases = build_fixtures(Path(args.scenarios), Path(args.database) if args.database else None)
    write_jsonl(args.out, cases)
    labels, verdicts = label_counts(cases)
    print(f"{len(cases)} Verifier inputs, {sum(labels.values())} claims -> {args.out}")
    print("claims by verification:", dict(sorted(labels.items())))
    print("inputs by verdict:", dict(sorted(verdicts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
