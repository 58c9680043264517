"""The built-in Gatekeeper rules, one per module (sqlfluff style). The registry maps rule id → class."""

from __future__ import annotations

from evigate.rules.builtin.action_entity_grounding import ActionEntityGrounding
from evigate.rules.builtin.destructive_command import DestructiveCommand
from evigate.rules.builtin.entity_grounding import EntityGrounding
from evigate.rules.builtin.evidence_utilization import EvidenceUtilization
from evigate.rules.builtin.excerpt_similarity import ExcerptSimilarity
from evigate.rules.builtin.external_entity import ExternalEntity
from evigate.rules.builtin.failed_invocation import FailedInvocation
from evigate.rules.builtin.hallucination_phrases import HallucinationPhrases
from evigate.rules.builtin.input_echo import InputEcho
from evigate.rules.builtin.invocation_ref import InvocationRef
from evigate.rules.builtin.junk_text import JunkText
from evigate.rules.builtin.misattribution import Misattribution
from evigate.rules.builtin.planted_instruction import PlantedInstruction
from evigate.rules.builtin.question_echo import QuestionEcho
from evigate.rules.builtin.schema_executor_v2 import SchemaExecutorV2
from evigate.rules.gate.base import Rule

BUILTIN_RULES: tuple[type[Rule], ...] = (
    SchemaExecutorV2, InvocationRef, FailedInvocation, ExcerptSimilarity, Misattribution, InputEcho,
    HallucinationPhrases, EvidenceUtilization, EntityGrounding, ExternalEntity, QuestionEcho,
    ActionEntityGrounding, JunkText, PlantedInstruction, DestructiveCommand,
)
RULE_CLASSES: dict[str, type[Rule]] = {rule.id: rule for rule in BUILTIN_RULES}
"""rule id → implementation; the rule index may only name ids found here."""

__all__ = ["BUILTIN_RULES", "RULE_CLASSES"]
