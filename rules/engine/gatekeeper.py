"""The Gatekeeper (§9–§12): deterministic, configurable rules between the Executor and the Verifier."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from evigate.rules.builtin import RULE_CLASSES
from evigate.rules.builtin.schema_executor_v2 import normalize_executor_output
from evigate.rules.engine.config import apply_overrides, load_builtin_specs, load_user_specs
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleSpec
from evigate.rules.gate.parsing import ParsedOutput, parse_executor_output
from evigate.rules.gate.session import InvocationView, SessionIndex, as_view, claim_key
from evigate.rules.gate.spans import matched_spans
from evigate.rules.text.vocabulary import EntityVocabulary
from evigate.signatures import (
    BindingSpan,
    ExecutorOutputParseStatus,
    GatekeeperError,
    GatekeeperResult,
    ToolInvocation,
    ToolTraceEntry,
    VerdictImpact,
)
from evigate.signatures.gatekeeper import GateStatus

MAX_ERRORS = 300
"""The audit keeps at most this many error records (§12: the result stays light)."""
MAX_MESSAGE_CHARS = 500
SESSION_CACHE_SIZE = 8
VIEW_CACHE_SIZE = 1024
_CLAIM_TARGET = re.compile(r"^claims\[(\d+)\]")

_T = TypeVar("_T")


class _hybridmethod(Generic[_T]):
    """A method callable on the class (applied to ``Gatekeeper.default()``) or on an instance."""

    def __init__(self, function: Callable[..., _T]) -> None:
        self.function = function
        self.__doc__ = function.__doc__

    def __get__(self, instance: Any, owner: type) -> Callable[..., _T]:
        target = instance if instance is not None else cast(Any, owner).default()  # the class's shipped default
        return lambda *args, **kwargs: self.function(target, *args, **kwargs)


@dataclass(frozen=True)
class GateOutcome:
    """What one validation produced.

    ``result`` is the §12 record; ``normalized`` the §11.1-normalised output (None when the output is no object);
    ``excluded_claims`` the ids of claims a ``reject_on_fail`` rule hit (never shown to a user);
    ``failed_claims`` the ids of claims any fail-level error targets (never allowed, §15.3);
    ``spans`` where each accepted binding's excerpt sits in the cited outputs (for the audit and its viewers).
    """

    result: GatekeeperResult
    normalized: dict[str, Any] | None
    excluded_claims: list[str] = field(default_factory=list)
    failed_claims: list[str] = field(default_factory=list)
    parse_status: ExecutorOutputParseStatus | None = None
    spans: list[BindingSpan] = field(default_factory=list)


@lru_cache(maxsize=1)
def _builtin_specs() -> dict[str, RuleSpec]:
    return load_builtin_specs()


def _coerce_parsed(parsed: Any) -> ParsedOutput:
    return parsed if isinstance(parsed, ParsedOutput) else parse_executor_output(parsed)


def claim_ids_of_targets(
    normalized: Mapping[str, Any] | None, errors: Iterable[GatekeeperError], keep: Callable[[GatekeeperError], bool]
) -> list[str]:
    """Claim ids (in claim order) of the errors ``keep`` selects whose target lies inside ``claims[i]``."""
    claims = normalized.get("claims") if isinstance(normalized, Mapping) else None
    if not isinstance(claims, list):
        return []
    indexes: set[int] = set()
    for error in errors:
        match = _CLAIM_TARGET.match(error.target)
        if match and keep(error):
            indexes.add(int(match.group(1)))
    ids: list[str] = []
    for index in sorted(indexes):
        if index < len(claims):
            claim = claims[index]
            key = claim_key(claim, index) if isinstance(claim, Mapping) else f"claims[{index}]"
            if key not in ids:
                ids.append(key)
    return ids


class Gatekeeper:
    """Runs the enabled rules of a rule set over one executor output and the session's invocations."""

    def __init__(
        self,
        specs: Mapping[str, RuleSpec],
        rule_classes: Mapping[str, type[Rule]] = RULE_CLASSES,
        vocabulary: EntityVocabulary | None = None,
    ) -> None:
        self._specs = dict(specs)
        self._vocabulary = vocabulary or None
        self._rule_classes = dict(rule_classes)
        self._rules = {rule_id: self._rule_classes[rule_id]() for rule_id in self._specs}
        self._sessions: OrderedDict[tuple[Any, ...], tuple[SessionIndex, tuple[Any, ...]]] = OrderedDict()
        self._views: OrderedDict[int, tuple[Any, InvocationView | None]] = OrderedDict()
        self._lock = threading.Lock()  # one Gatekeeper may serve parallel evaluations

    # -- construction -------------------------------------------------------------------------------------------

    @classmethod
    def default(cls) -> Gatekeeper:
        """The rule index and metadata shipped in the package."""
        return cls(_builtin_specs())

    @classmethod
    def from_yaml(cls, path: str | Path) -> Gatekeeper:
        """A user's copy of the rules (one YAML file, or a directory with index.yaml + metadata/<id>.yaml)."""
        return cls(load_user_specs(path, _builtin_specs()))

    @classmethod
    def from_config(
        cls, rules_file: str | Path | None = None, overrides: Mapping[str, Any] | None = None
    ) -> Gatekeeper:
        """What settings ask for: an optional user rules file, then per-rule overrides."""
        gatekeeper = cls.from_yaml(rules_file) if rules_file else cls.default()
        return gatekeeper.with_overrides(overrides or {})

    @_hybridmethod
    def with_overrides(self, overrides: Mapping[str, Any]) -> Gatekeeper:
        """A copy with ``{rule id: {"enabled": …, "params": {…}, "severity": …, "verdictImpact": …}}`` applied.

        Callable on the class (overrides the shipped rules) or on an instance (overrides that rule set).
        """
        return Gatekeeper(apply_overrides(self._specs, overrides), self._rule_classes, self._vocabulary)

    @_hybridmethod
    def with_vocabulary(self, vocabulary: EntityVocabulary | None) -> Gatekeeper:
        """A copy whose rules also recognise the names of ``vocabulary`` as entities (a Domain's services, error
        codes, metric names, stored procedures, id patterns), even where their shape alone would not.

        The vocabulary is added to any the gatekeeper already had; ``None`` or an empty vocabulary changes nothing.
        """
        if vocabulary is not None and not isinstance(vocabulary, EntityVocabulary):
            raise TypeError(f"with_vocabulary expects an EntityVocabulary, got {type(vocabulary).__name__}")
        merged = vocabulary.merged(self._vocabulary) if vocabulary else self._vocabulary
        return Gatekeeper(self._specs, self._rule_classes, merged)

    @property
    def vocabulary(self) -> EntityVocabulary | None:
        """The names this gatekeeper's rules recognise beyond entity shapes (None: shapes only)."""
        return self._vocabulary
    # -- metadata -----------------------------------------------------------------------------------------------

    @property
    def rules(self) -> tuple[RuleSpec, ...]:
        """Every rule's merged index entry and metadata, in index order (enabled or not)."""
        return tuple(self._specs.values())

    @property
    def verdict_impacts(self) -> dict[str, VerdictImpact]:
        """rule id → ``reject_on_fail`` | ``low_confid_on_fail`` | ``warn_only`` (§12.2: read from metadata)."""
        return {rule_id: spec.verdict_impact for rule_id, spec in self._specs.items()}

    def rule_class(self, rule_id: str) -> type[Rule]:
        """The implementation of a rule id."""
        return type(self._rules[rule_id])

    # -- validation ---------------------------------------------------------------------------------------------

    def session_index(
        self,
        invocations: Sequence[ToolInvocation | Mapping[str, Any]],
        session_id: str,
        trace_summary: Sequence[ToolTraceEntry | Mapping[str, Any]] | None = None,
        query: str = "",
        evidence_named: Sequence[str] = (),
    ) -> SessionIndex:
        """The session's evidence index, reused while the same invocation objects are passed (e.g. across rounds).

        Invocations are immutable, so identity is a safe key; the caches hold the objects so ids are not recycled.
        When round 2 adds invocations, the index is new but the views of round 1's invocations (their flattened and
        folded texts) are reused.
        """
        invocations = list(invocations or ())
        trace = list(trace_summary or ())
        named = tuple(evidence_named)
        key = (session_id, query, named, tuple(map(id, invocations)), tuple(map(id, trace)))
        with self._lock:
            cached = self._sessions.get(key)
            if cached is not None:
                self._sessions.move_to_end(key)
                return cached[0]
        index = SessionIndex(invocations, session_id, trace, query, view_of=self._view_of, evidence_named=named)
        with self._lock:
            self._sessions[key] = (index, (invocations, trace))
            while len(self._sessions) > SESSION_CACHE_SIZE:
                self._sessions.popitem(last=False)
        return index

    def _view_of(self, invocation: ToolInvocation | Mapping[str, Any]) -> InvocationView | None:
        with self._lock:
            cached = self._views.get(id(invocation))
            if cached is not None and cached[0] is invocation:
                self._views.move_to_end(id(invocation))
                return cached[1]
        view = as_view(invocation)
        with self._lock:
            self._views[id(invocation)] = (invocation, view)
            while len(self._views) > VIEW_CACHE_SIZE:
                self._views.popitem(last=False)
        return view

    def validate(
        self,
        parsed: ParsedOutput | str | dict[str, Any] | None,
        invocations: Sequence[ToolInvocation | Mapping[str, Any]],
        session_id: str,
        trace_summary: Sequence[ToolTraceEntry | Mapping[str, Any]] | None = None,
        *,
        query: str = "",
        evidence_named: Sequence[str] = (),
    ) -> GateOutcome:
        """Run every enabled rule. Never raises on data: a rule that crashes fails (closed) with its message.

        ``query`` is the user's question: entities it names are not "external" (``claim.external_entity``).
        ``evidence_named`` is what the evidence named for it (``Plan.evidence_named``; see ``SessionIndex``).
        """
        parsed = _coerce_parsed(parsed)
        schema = self._specs.get("schema.executor_v2")
        optional = ("hypotheses", "recommended_actions", "missing_info")
        normalized = normalize_executor_output(parsed.data, optional) if parsed.status == "valid" else None
        session = self.session_index(invocations, session_id, trace_summary, query, evidence_named)
        context = RuleContext(
            data=normalized, session=session, parse_status=parsed.status, vocabulary=self._vocabulary
        )
        errors: list[GatekeeperError] = []
        failed_rules: list[str] = []
        warning_rules: list[str] = []
        for rule_id, spec in self._specs.items():
            if not spec.enabled:
                continue
            if normalized is None and spec is not schema:
                continue  # nothing to check: the schema rule reports the unusable output once
            findings = self._run(self._rules[rule_id], context, spec)
            levels = {finding.level for finding in findings}
            if "fail" in levels:
                failed_rules.append(rule_id)
            elif "warn" in levels:
                warning_rules.append(rule_id)
            errors.extend(
                GatekeeperError(rule_id=rule_id, target=f.target, message=f.message[:MAX_MESSAGE_CHARS], level=f.level)
                for f in findings
            )
        status: GateStatus = "fail" if failed_rules else "warn" if warning_rules else "pass"
        result = GatekeeperResult(
            status=status, failed_rules=failed_rules, warnings=warning_rules, errors=errors[:MAX_ERRORS]
        )
        impacts = self.verdict_impacts
        return GateOutcome(
            result=result,
            normalized=normalized,
            excluded_claims=claim_ids_of_targets(
                normalized, errors, lambda e: e.level == "fail" and impacts.get(e.rule_id) == "reject_on_fail"
            ),
            failed_claims=claim_ids_of_targets(normalized, errors, lambda e: e.level == "fail"),
            parse_status=parsed.parse_status,
            spans=self._spans(context, errors) if normalized is not None else [],
        )

    @staticmethod
    def _spans(context: RuleContext, errors: list[GatekeeperError]) -> list[BindingSpan]:
        """Where accepted bindings matched; a failure here costs the viewer its highlights, never a verdict."""
        try:
            return matched_spans(context, errors)
        except Exception:
            return []

    @staticmethod
    def _run(rule: Rule, context: RuleContext, spec: RuleSpec) -> list[RuleFinding]:
        try:
            findings = list(rule.validate(context, spec.params))
        except Exception as error:  # fail closed: a broken rule must not let an output through
            findings = [RuleFinding("$", f"rule could not run: {type(error).__name__}: {error}")]
        if spec.finding_level == "warn":
            findings = [RuleFinding(f.target, f.message, "warn") for f in findings]
        return findings
