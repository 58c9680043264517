"""evigate.rules — the deterministic core: parsing, the Gatekeeper, the verdict matrix, composer input and guard.

Pure functions and rule objects: no I/O beyond loading the rule YAML shipped in this package, no DSPy.
"""

from __future__ import annotations

from evigate.rules.answer.claim_echo import check_claim_echo
from evigate.rules.answer.composer_guard import check_composer_output
from evigate.rules.answer.composer_input import build_composer_input
from evigate.rules.answer.render import (
    OUTPUT_TYPE_OF_VERDICT,
    render_answer,
    render_deterministic,
    render_parse_failure,
)
from evigate.rules.engine.gatekeeper import Gatekeeper, GateOutcome
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams, RuleSpec
from evigate.rules.gate.parsing import ParsedOutput, parse_executor_output
from evigate.rules.verdict.matrix import VerdictDecision, decide_verdict
from evigate.rules.verdict.retry import build_retry_context
from evigate.rules.verdict.scoring import score_rule_evaluation

__all__ = [
    "OUTPUT_TYPE_OF_VERDICT", "GateOutcome", "Gatekeeper", "ParsedOutput", "Rule", "RuleContext", "RuleFinding",
    "RuleParams", "RuleSpec", "VerdictDecision", "build_composer_input", "build_retry_context",
    "check_claim_echo", "check_composer_output", "decide_verdict", "parse_executor_output", "render_answer",
    "render_deterministic", "render_parse_failure", "score_rule_evaluation",
]
