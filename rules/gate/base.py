"""The fixed rule interface (§10.3): a rule has an id, a typed ``Params`` model and ``validate(context, params)``.

New kinds of rule need code; thresholds, word lists and on/off switches live in YAML metadata (§10.2).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from evigate.rules.gate.session import SessionIndex
from evigate.rules.text.vocabulary import EntityVocabulary
from evigate.signatures import VerdictImpact

FindingLevel = Literal["fail", "warn"]
Severity = Literal["error", "warning"]


class RuleParams(BaseModel):
    """Base of every rule's parameters: camelCase keys in YAML (snake_case accepted), unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True)


@dataclass(frozen=True, slots=True)
class RuleFinding:
    """One problem a rule found, at a field path such as ``claims[0].evidence_bindings[1]``."""

    target: str
    message: str
    level: FindingLevel = "fail"


@dataclass
class RuleContext:
    """What every rule sees: the normalised executor output and the session's evidence.

    ``memo`` lets rules share expensive intermediate results (e.g. excerpt scores) within one validation;
    ``vocabulary`` holds the names a deployment knows (see :meth:`Gatekeeper.with_vocabulary`).
    """

    data: dict[str, Any] | None
    session: SessionIndex
    parse_status: str = "valid"
    memo: dict[Any, Any] = field(default_factory=dict)
    vocabulary: EntityVocabulary | None = None


class RuleSpec(BaseModel):
    """A rule's index entry and metadata merged: what the Gatekeeper runs and the docs describe."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    id: str
    name: str
    description: str
    enabled: bool = True
    severity: Severity = "error"
    verdict_impact: VerdictImpact = Field(alias="verdictImpact")
    params: RuleParams
    source: str = Field(default="", description="the file (or override) this metadata last came from")

    @property
    def finding_level(self) -> FindingLevel:
        """A warning-severity or warn-only rule never fails the gate."""
        return "warn" if self.severity == "warning" or self.verdict_impact == "warn_only" else "fail"


class Rule(ABC):
    """Base of every Gatekeeper rule. Subclasses live one per file in :mod:`evigate.rules.builtin`."""

    id: ClassVar[str]
    Params: ClassVar[type[RuleParams]] = RuleParams

    @abstractmethod
    def validate(self, context: RuleContext, params: Any) -> list[RuleFinding]:
        """Check the context; return findings (empty = the rule passes). Must not raise on any data."""

    @classmethod
    def summary(cls) -> str:
        """The first paragraph of the rule's docstring (used by the generated docs)."""
        doc = inspect.getdoc(cls) or ""
        return doc.split("\n\n", 1)[0].replace("\n", " ").strip()

    @classmethod
    def details(cls) -> str:
        """The rest of the rule's docstring."""
        doc = inspect.getdoc(cls) or ""
        parts = doc.split("\n\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""
