"""Scoring an Executor (plan mode, tool outputs fixed) by the product's own rules, code only.

The raw output is parsed (``parse_executor_output``), code's claims are added and the Gatekeeper judges the result
exactly as a round does (``modules/gating.gate_executor_output``), and code confirms what it can
(``confirm_by_code``). Each component is a share of the Executor's own claims (as it wrote them):

* **confirmed**: claims code confirms as direct observation (they restate a cited, successful output), kept as
  written (not rewritten by code);
* **grounded**: claims every entity of which occurs in a successful output of the session;
* **key_facts**: of the incident's key entities (``world_facts.key_entities``: error code, service, anchor order,
  anchor trace) that the session's outputs show, the share a confirmed critical claim names (``judge_facts``'s
  conditions: direct, critical type, names the key, every entity in the outputs);
* **clean**: claims that are no junk (code did not rewrite them, and ``rules.text.junk.junk_reason`` finds nothing);
* **not_rejected**: claims no Gatekeeper rule fails or excludes.

Score = the mean of the five, in [0, 1]. A parse failure, or an output without any claim, scores 0.
``own_share`` records how many of the final claims (those the Gatekeeper leaves: kept, rewritten, added by code)
are the Executor's own as written (issue 19's target: at least half).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.optimize.metric_base import CaseMetric

COMPONENTS: tuple[str, ...] = ("confirmed", "grounded", "key_facts", "clean", "not_rejected")


@dataclass
class ExecutorScore:
    """One question's Executor output scored (see the module docstring); ``.case_id`` is the question id."""

    case_id: str
    score: float
    parse_status: str
    own_claims: int = 0
    final_claims: int = 0
    own_kept: int = 0
    confirmed: float = 0.0
    grounded: float = 0.0
    key_facts: float = 0.0
    clean: float = 0.0
    not_rejected: float = 0.0
    missing_keys: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    error: str | None = None

    @property
    def own_share(self) -> float:
        """The share of the final claims that are the Executor's own, as written."""
        return self.own_kept / self.final_claims if self.final_claims else 0.0

    def feedback(self) -> str:
        if self.error:
            return f"The executor failed: {self.error}"
        if self.parse_status != "valid":
            return f"The output is not valid executor_evidence_v2 JSON ({self.parse_status}); it scores 0."
        if not self.own_claims:
            return "The output states no claim; state what the cited tool outputs show, each with its evidence."
        lines = [f"{name}: {getattr(self, name):.0%}" for name in COMPONENTS]
        if self.missing_keys:
            lines.append(f"No confirmed finding names: {', '.join(self.missing_keys)}.")
        lines.extend(self.problems[:6])
        return "; ".join(lines)


@dataclass
class ExecutorSummary:
    """Set-level figures of an Executor evaluation."""

    cases: int
    mean_score: float
    parse_valid_rate: float
    means: dict[str, float]
    own_share: float
    own_share_at_least_half: float
    errors: int

    def metrics(self, prefix: str = "") -> dict[str, float]:
        values = {"score": self.mean_score, "parse_valid_rate": self.parse_valid_rate, **self.means,
                  "own_share": self.own_share, "own_share_at_least_half": self.own_share_at_least_half,
                  "errors": float(self.errors), "cases": float(self.cases)}
        return {f"{prefix}{key}": value for key, value in values.items()}


@dataclass(frozen=True)
class ExecutorCase:
    """A question of the bank with its cached Executor inputs (``stage_cache.StageInputs``)."""

    question: Any
    inputs: Any

    @property
    def case_id(self) -> str:
        return str(self.question.id)


class _Gatekeeper:
    """One default Gatekeeper per metric (building it reads the rule config)."""

    def __init__(self) -> None:
        self._value: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._value is None:
                from evigate.rules import Gatekeeper

                self._value = Gatekeeper.default()
            return self._value


def score_executor(case: ExecutorCase, raw_output: str | None, gatekeeper: Any, *,
                   error: str | None = None) -> ExecutorScore:
    """Score one raw Executor output for its cached question (see the module docstring)."""
    from evigate.modules.contributions import executor_contribution
    from evigate.modules.gating import gate_executor_output
    from evigate.rules import parse_executor_output
    from evigate.rules.contract import claim_key, iter_claims
    from evigate.rules.verdict.confirmation import confirm_by_code

    parsed = parse_executor_output(raw_output or "")
    if error is not None or parsed.status != "valid":
        return ExecutorScore(case.case_id, 0.0, parsed.status if error is None else "error", error=error)
    invocations = case.inputs.recorded_invocations()
    session_id = invocations[0].session_id if invocations else f"stage-{case.inputs.key}"
    gated = gate_executor_output(gatekeeper, invocations, session_id, case.question.text, raw_output or "", parsed)
    contribution = executor_contribution(gated.written, gated.gate, rewrites=gated.rewrites, observed=gated.observed,
                                         observations_dropped=gated.observations_dropped)
    status = {item.claim_id: item.status for item in contribution.claims}
    own = [(claim_key(claim, index), claim) for index, claim in iter_claims(gated.written)]
    final = contribution.kept + contribution.rewritten + contribution.added_by_code
    if not own:
        return ExecutorScore(case.case_id, 0.0, parsed.status, final_claims=final)
    gate = gated.gate
    confirmed = confirm_by_code(gate.normalized, gated.session, failed_claims=gate.failed_claims).confirmed
    direct = {key for key, check in confirmed.items() if check.verification == "direct_observation"
              and status.get(key) == "kept"}
    outputs = [inv.output or inv.output_preview for inv in invocations if inv.success]
    judged = [_judge_claim(key, claim, direct, status, gate, outputs, case.question.text) for key, claim in own]
    keys_seen, covered = _key_facts(case, [claim for (key, claim) in own if key in direct], outputs)
    shares = {name: sum(item[name] for item in judged) / len(judged) for name in ("confirmed", "grounded", "clean",
                                                                                   "not_rejected")}
    shares["key_facts"] = len(covered) / len(keys_seen) if keys_seen else 1.0
    problems = tuple(problem for item in judged for problem in item["problems"])
    return ExecutorScore(
        case.case_id, sum(shares.values()) / len(shares), parsed.status, own_claims=len(own), final_claims=final,
        own_kept=contribution.kept, missing_keys=tuple(k for k in keys_seen if k not in covered), problems=problems,
        **shares,
    )


def _judge_claim(key: str, claim: dict[str, Any], direct: set[str], status: Mapping[str, str], gate: Any,
                 outputs: Sequence[str], query: str) -> dict[str, Any]:
    from evigate.rules.contract import claim_text
    from evigate.rules.text.entities import entity_occurs, extract_entities
    from evigate.rules.text.junk import junk_reason

    text = claim_text(claim)
    unknown = [e.text for e in extract_entities(text) if not any(entity_occurs(e, output) for output in outputs)]
    junk = status.get(key) == "rewritten" or junk_reason(text, query, "\n".join(outputs)) is not None
    rejected = status.get(key) == "dropped" or key in set(gate.failed_claims) or key in set(gate.excluded_claims)
    problems = [f"{key}: names {unknown} that no output shows"] if unknown else []
    problems += [f"{key}: junk (restates, repeats or names nothing of the evidence)"] if junk else []
    problems += [f"{key}: a Gatekeeper rule fails or excludes it"] if rejected else []
    return {"confirmed": key in direct, "grounded": not unknown, "clean": not junk, "not_rejected": not rejected,
            "problems": problems}


def _key_facts(case: ExecutorCase, confirmed: Sequence[dict[str, Any]], outputs: Sequence[str]) -> tuple[
        list[str], set[str]]:
    """(the incident's key entities the outputs show, those a confirmed critical claim names)."""
    from evigate.demo.catalog import incident_by_id
    from evigate.optimize.world_facts import key_entities
    from evigate.rules.contract import claim_text
    from evigate.rules.text.records import names_record
    from evigate.signatures import CRITICAL_CLAIM_TYPES

    if not case.question.incident:
        return [], set()
    incident = incident_by_id(case.question.incident)
    order = str(incident.anchor_order_id) if incident.anchor_order_id else ""
    seen = [key for key in key_entities(incident)
            if any(names_record(order, output) if key == order else key in output for output in outputs)]
    covered: set[str] = set()
    for claim in confirmed:
        if claim.get("claim_type") not in CRITICAL_CLAIM_TYPES:
            continue
        text = claim_text(claim)
        covered.update(key for key in seen if (names_record(order, text) if key == order
                                               else key.casefold() in text.casefold()))
    return seen, covered


def summarize_executor(scores: Sequence[ExecutorScore]) -> ExecutorSummary:
    count = len(scores)

    def mean(values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    return ExecutorSummary(
        cases=count, mean_score=mean([s.score for s in scores]),
        parse_valid_rate=mean([float(s.parse_status == "valid") for s in scores]),
        means={name: mean([getattr(s, name) for s in scores]) for name in COMPONENTS},
        own_share=mean([s.own_share for s in scores]),
        own_share_at_least_half=mean([float(s.own_share >= 0.5) for s in scores]),
        errors=sum(1 for s in scores if s.error),
    )


class ExecutorMetric(CaseMetric):
    """The DSPy metric of the Executor (``example.case`` holds an :class:`ExecutorCase`)."""

    __name__ = "executor_metric"

    def __init__(self, *, feedback: bool = False, threshold: float = 0.6) -> None:
        super().__init__(feedback=feedback, threshold=threshold)
        self.gatekeeper = _Gatekeeper()

    def score_case(self, example: Any, pred: Any) -> ExecutorScore:
        raw = getattr(pred, "raw_output", None) if pred is not None else None
        return score_executor(example.case, raw, self.gatekeeper.get())
