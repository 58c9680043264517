"""evigate.rules — the deterministic core: parsing, the Gatekeeper, the verdict matrix, composer input and guard.

Pure functions and rule objects: no I/O beyond loading the rule YAML shipped in this package, no DSPy.
"""

from __future__ import annotations

from evigate.rules.base import Rule, RuleContext, RuleFinding, RuleParams, RuleSpec
from evigate.rules.claim_echo import check_claim_echo
from evigate.rules.composer_guard import check_composer_output
from evigate.rules.composer_input import build_composer_input
from evigate.rules.gatekeeper import Gatekeeper, GateOutcome
from evigate.rules.parsing import ParsedOutput, parse_executor_output
from evigate.rules.render import OUTPUT_TYPE_OF_VERDICT, render_answer, render_deterministic, render_parse_failure
from evigate.rules.retry import build_retry_context
from evigate.rules.scoring import score_rule_evaluation
from evigate.rules.verdict import VerdictDecision, decide_verdict

__all__ = [
    "OUTPUT_TYPE_OF_VERDICT", "GateOutcome", "Gatekeeper", "ParsedOutput", "Rule", "RuleContext", "RuleFinding",
    "RuleParams", "RuleSpec", "VerdictDecision", "build_composer_input", "build_retry_context",
    "check_claim_echo", "check_composer_output", "decide_verdict", "parse_executor_output", "render_answer",
    "render_deterministic", "render_parse_failure", "score_rule_evaluation",
]
