"""A deployment's vocabulary: the one model of the names its questions and answers use. Pure data, no I/O.

:class:`Vocabulary` is what a Domain plug-in declares (``domain.yaml``'s ``vocabulary``): services and their
aliases, error codes, identifier kinds with the regexes that write them, metric hints, other names and id
patterns. Two readers use it: the question reader (:class:`~evigate.rules.text.question.EntityExtractor`, which
fills skill templates) reads it whole; the Gatekeeper's entity reader
(:func:`~evigate.rules.text.entities.extract_entities`) reads its names as an :class:`EntityVocabulary`
(:meth:`Vocabulary.entity_vocabulary`): frozen and hashable, so readings are cached, and each name in it is an
entity wherever it occurs as a whole word, even when its shape alone would not make it one. Shape alone cannot
tell that ``orders`` is a namespace or ``usp_settle_batch`` a stored procedure in every deployment; a vocabulary
can. Give one to the Gatekeeper with :meth:`evigate.rules.Gatekeeper.with_vocabulary`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from evigate.errors import RuleConfigError


def regex_problem(pattern: object) -> str | None:
    """Why ``pattern`` is no regular expression, or None when it compiles."""
    if not isinstance(pattern, str):
        return f"expected a string, got {type(pattern).__name__}"
    try:
        re.compile(pattern)
    except re.error as error:
        return str(error)
    return None


def alternation(names: Iterable[str]) -> str:
    """One regex alternative per name, escaped, longest first (so "支付网关" wins over "网关")."""
    return "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))


def _regex(value: str) -> str:
    problem = regex_problem(value)
    if problem:
        raise ValueError(f"not a valid regular expression ({problem}): {value!r}")
    return value


def _value_regex(value: str) -> str:
    """A regex whose first group (or whole match) is the value: at most one capture group."""
    groups = re.compile(_regex(value)).groups
    if groups > 1:
        raise ValueError(f"at most one capture group (the value), got {groups}: {value!r}")
    return value


def _placeholder(name: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", name):
        raise ValueError(f"identifier names are lower_snake_case placeholders, got {name!r}")
    return name


Regex = Annotated[str, AfterValidator(_regex)]
ValueRegex = Annotated[str, AfterValidator(_value_regex)]
Placeholder = Annotated[str, AfterValidator(_placeholder)]


class IdRegex(BaseModel):
    """One way an identifier is written: a regex whose first group (or whole match) is the value."""

    model_config = ConfigDict(extra="forbid")
    regex: ValueRegex = Field(description="Python regular expression, matched case-insensitively; group 1 is the value")
    must_match: list[str] = Field(default_factory=list, description="regexes the value must each contain")


class IdPattern(BaseModel):
    """An identifier kind (order id, trace id, ticket number …): the placeholder `{name}` skills use."""

    model_config = ConfigDict(extra="forbid")
    patterns: list[IdRegex | str] = Field(min_length=1, description="regexes (or {regex, must_match}), in order")
    type: Literal["str", "int"] = Field(default="str", description="int ids are compared and filled as numbers")
    case: Literal["keep", "lower", "upper"] = "keep"
    handle: bool = Field(
        default=True, description="a value points at one incident (an order, a trace); false for e.g. HTTP statuses"
    )

    @field_validator("patterns")
    @classmethod
    def _regexes(cls, values: list[IdRegex | str]) -> list[IdRegex | str]:
        return [IdRegex(regex=v) if isinstance(v, str) else v for v in values]


class Vocabulary(BaseModel):
    """What the names in a question can be: services, error codes, identifiers and metrics of one domain."""

    model_config = ConfigDict(extra="forbid")
    services: list[str] = Field(default_factory=list, description="service ids, e.g. checkout-api")
    service_aliases: dict[str, str] = Field(
        default_factory=dict, description="other names of a service (any language) -> its service id"
    )
    not_service_terms: list[str] = Field(
        default_factory=list,
        description="terms that hold a service alias but name no service (a 'database connection pool' is the "
        "application's pool, not the database); the alias inside them is not read",
    )
    error_codes: list[str] = Field(default_factory=list, description="known error codes, matched as whole tokens")
    error_code_pattern: ValueRegex | None = Field(
        default=None, description="regex of error codes not listed, e.g. 'ERR_[A-Z0-9_]+' (group 1 or whole match)"
    )
    identifiers: dict[Placeholder, IdPattern] = Field(
        default_factory=dict,
        description="placeholder name (singular, e.g. order_id) -> how it is written; found values land in "
        "entities['<name>s'] (http_status → http_statuses) and fill '{<name>}' in skill steps",
    )
    metrics: dict[str, ValueRegex] = Field(
        default_factory=dict, description="metric name -> regex of words hinting at it (e.g. 'latency|p99|slow')"
    )
    names: list[str] = Field(
        default_factory=list,
        description="other names the Gatekeeper must treat as entities (namespaces, stored procedures, hosts)",
    )
    id_patterns: list[Regex] = Field(
        default_factory=list, description="regexes whose every match is an identifier for the Gatekeeper (ORD-\\d{6})"
    )

    @field_validator("error_code_pattern", mode="before")
    @classmethod
    def _no_empty_pattern(cls, value: object) -> object:
        return value or None  # "" means no pattern

    def incident_handles(self) -> list[str]:
        """Entity keys whose values point at one incident: services and the identifiers marked `handle`."""
        return ["services", *(plural(name) for name, spec in self.identifiers.items() if spec.handle)]

    def placeholders(self) -> frozenset[str]:
        """Skill placeholders this vocabulary can fill, besides the generic ones."""
        return frozenset(self.identifiers)

    def entity_vocabulary(self) -> EntityVocabulary:
        """The names the Gatekeeper's entity rules must recognise beyond entity shapes: services, error codes, metric
        names and other names as identifiers, and the id patterns."""
        return EntityVocabulary(
            services=frozenset(self.services),
            error_codes=frozenset(self.error_codes),
            identifiers=frozenset([*self.metrics, *self.names]),
            id_patterns=tuple(self.id_patterns),
        )


def plural(name: str) -> str:
    """The entity key of an identifier placeholder: order_id → order_ids, http_status → http_statuses."""
    return f"{name}es" if name.endswith(("s", "x", "sh", "ch")) else f"{name}s"


def singular(key: str) -> str:
    """The placeholder an entity key fills (inverse of `plural`)."""
    return key[:-2] if key.endswith(("ses", "xes", "shes", "ches")) else key[:-1]


@dataclass(frozen=True)
class EntityVocabulary:
    """The names of a :class:`Vocabulary` as the entity reader sees them. ``identifiers`` holds metric names, stored
    procedures, namespaces, any name; ``id_patterns`` regular expressions whose every match is an identifier
    (e.g. ``ORD-\\d{6}``)."""

    services: frozenset[str] = frozenset()
    error_codes: frozenset[str] = frozenset()
    identifiers: frozenset[str] = frozenset()
    id_patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("services", "error_codes", "identifiers"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(item, str) for item in value):
                raise RuleConfigError(f"EntityVocabulary.{name} must be a set of strings")
            object.__setattr__(self, name, frozenset(item.strip() for item in value if item.strip()))
        if isinstance(self.id_patterns, str):
            raise RuleConfigError("EntityVocabulary.id_patterns must be a sequence of regular expressions")
        object.__setattr__(self, "id_patterns", tuple(self.id_patterns))
        for pattern in self.id_patterns:
            problem = regex_problem(pattern)
            if problem:
                raise RuleConfigError(f"EntityVocabulary.id_patterns: {pattern!r} is not a regular expression: "
                                      f"{problem}")

    def __bool__(self) -> bool:
        return bool(self.services or self.error_codes or self.identifiers or self.id_patterns)

    @cached_property
    def names(self) -> dict[str, str]:
        """name → entity kind; a name listed under several kinds takes the most specific (error code first)."""
        kinds: dict[str, str] = {}
        for kind, names in (("identifier", self.identifiers), ("service", self.services),
                            ("error_code", self.error_codes)):
            kinds.update(dict.fromkeys(names, kind))
        return kinds

    @cached_property
    def name_pattern(self) -> re.Pattern[str] | None:
        """One alternation of every name (longest first), matched as a whole word."""
        if not self.names:
            return None
        return re.compile(rf"(?<![A-Za-z0-9_\-.])(?:{alternation(self.names)})(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])")

    @cached_property
    def compiled_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(pattern) for pattern in self.id_patterns)

    def merged(self, other: EntityVocabulary | None) -> EntityVocabulary:
        """Both vocabularies' names together."""
        if other is None:
            return self
        return EntityVocabulary(
            self.services | other.services, self.error_codes | other.error_codes,
            self.identifiers | other.identifiers, tuple(dict.fromkeys(self.id_patterns + other.id_patterns)),
        )
