"""A domain's entity vocabulary and the query-entity extractor it drives.

Pure regular expressions, no I/O, so the Planner can fill skill templates deterministically and the evidence view
can pick the lines that matter. Patterns use ASCII look-arounds instead of `\\b` because Python treats CJK
characters as word characters ("ERR_TIMEOUT是什么" has no word boundary after the code).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evigate.domain.times import named_times, time_label, time_window


def _compiles(value: str) -> str:
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc}): {value!r}") from None
    if compiled.groups > 1:
        raise ValueError(f"at most one capture group (the value), got {compiled.groups}: {value!r}")
    return value


class IdRegex(BaseModel):
    """One way an identifier is written: a regex whose first group (or whole match) is the value."""

    model_config = ConfigDict(extra="forbid")
    regex: str = Field(description="Python regular expression, matched case-insensitively; group 1 is the value")
    must_match: list[str] = Field(default_factory=list, description="regexes the value must each contain")

    _check = field_validator("regex")(classmethod(lambda cls, v: _compiles(v)))


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
    error_codes: list[str] = Field(default_factory=list, description="known error codes, matched as whole tokens")
    error_code_pattern: str | None = Field(
        default=None, description="regex of error codes not listed, e.g. 'ERR_[A-Z0-9_]+' (group 1 or whole match)"
    )
    identifiers: dict[str, IdPattern] = Field(
        default_factory=dict,
        description="placeholder name (singular, e.g. order_id) -> how it is written; found values land in "
        "entities['<name>s'] (http_status → http_statuses) and fill '{<name>}' in skill steps",
    )
    metrics: dict[str, str] = Field(
        default_factory=dict, description="metric name -> regex of words hinting at it (e.g. 'latency|p99|slow')"
    )
    names: list[str] = Field(
        default_factory=list,
        description="other names the Gatekeeper must treat as entities (namespaces, stored procedures, hosts)",
    )
    id_patterns: list[str] = Field(
        default_factory=list, description="regexes whose every match is an identifier for the Gatekeeper (ORD-\\d{6})"
    )

    @field_validator("error_code_pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        return _compiles(value) if value else None

    @field_validator("id_patterns")
    @classmethod
    def _id_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc}): {pattern!r}") from None
        return value

    @field_validator("metrics")
    @classmethod
    def _hints(cls, value: dict[str, str]) -> dict[str, str]:
        for hint in value.values():
            _compiles(hint)
        return value

    @field_validator("identifiers")
    @classmethod
    def _names(cls, value: dict[str, IdPattern]) -> dict[str, IdPattern]:
        for name in value:
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", name):
                raise ValueError(f"identifier names are lower_snake_case placeholders, got {name!r}")
        return value

    def incident_handles(self) -> list[str]:
        """Entity keys whose values point at one incident: services and the identifiers marked `handle`."""
        return ["services", *(plural(name) for name, spec in self.identifiers.items() if spec.handle)]

    def placeholders(self) -> frozenset[str]:
        """Skill placeholders this vocabulary can fill, besides the generic ones."""
        return frozenset(self.identifiers)

    def extractor(self, today: date | None = None) -> EntityExtractor:
        return EntityExtractor(self, today)


_ASCII_WORD = r"A-Za-z0-9_"


def plural(name: str) -> str:
    """The entity key of an identifier placeholder: order_id → order_ids, http_status → http_statuses."""
    return f"{name}es" if name.endswith(("s", "x", "sh", "ch")) else f"{name}s"


def singular(key: str) -> str:
    """The placeholder an entity key fills (inverse of `plural`)."""
    return key[:-2] if key.endswith(("ses", "xes", "shes", "ches")) else key[:-1]


def _unique(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


class EntityExtractor:
    """`extract(query)`: the entities a question names, in order of appearance, without duplicates.

    Keys: `error_codes` (upper case), `services` (service ids; aliases map to them), one `<name>s` list per
    identifier, `metrics` (metric names hinted at), `times` ("YYYY-MM-DD HH:MM[:SS]"; bare clock times fall on
    `today`) and `time_window` ("START/END": the named times padded by 15 minutes, or None).
    """

    def __init__(self, vocabulary: Vocabulary, today: date | None = None) -> None:
        self.vocabulary = vocabulary
        self._today = today

    @cached_property
    def _service(self) -> re.Pattern[str] | None:
        names = sorted(self.vocabulary.services, key=len, reverse=True)
        if not names:
            return None
        return re.compile(r"(?<![a-z0-9-])(" + "|".join(re.escape(s) for s in names) + r")(?![a-z0-9-])", re.I)

    @cached_property
    def _code_pattern(self) -> re.Pattern[str] | None:
        pattern = self.vocabulary.error_code_pattern
        return re.compile(rf"(?<![{_ASCII_WORD}])(?:{pattern})(?![{_ASCII_WORD}])", re.I) if pattern else None

    @cached_property
    def _known_codes(self) -> tuple[re.Pattern[str] | None, dict[str, str]]:
        pattern = self._code_pattern
        others = [c for c in self.vocabulary.error_codes if pattern is None or not pattern.fullmatch(c)]
        if not others:
            return None, {}
        alternatives = "|".join(re.escape(c) for c in sorted(others, key=len, reverse=True))
        return (re.compile(rf"(?<![{_ASCII_WORD}])({alternatives})(?![{_ASCII_WORD}])", re.I),
                {c.upper(): c.upper() for c in others})

    @cached_property
    def _identifiers(self) -> list[tuple[str, IdPattern, list[tuple[re.Pattern[str], list[re.Pattern[str]]]]]]:
        compiled = []
        for name, spec in self.vocabulary.identifiers.items():
            regexes = [(re.compile(r.regex, re.I), [re.compile(m) for m in r.must_match])
                       for r in spec.patterns if isinstance(r, IdRegex)]
            compiled.append((name, spec, regexes))
        return compiled

    def today(self) -> date:
        return self._today or datetime.now().date()

    def extract(self, query: str) -> dict[str, Any]:
        text = query if isinstance(query, str) else ""
        entities: dict[str, Any] = {}
        for name, spec, regexes in self._identifiers:
            entities[plural(name)] = _unique(self._ids(text, spec, regexes))
        entities["error_codes"] = _unique(self._codes(text))
        entities["services"] = self._services(text)
        lowered = text.lower()
        entities["metrics"] = _unique([m for m, hint in self.vocabulary.metrics.items() if re.search(hint, lowered)])
        times = named_times(text, self.today())
        entities["times"] = _unique([time_label(t.moment) for t in times if not t.span_only])
        entities["time_window"] = time_window(times)
        return entities

    def _ids(self, text: str, spec: IdPattern, regexes: list[tuple[re.Pattern[str], list[re.Pattern[str]]]]) -> list:
        found: list[Any] = []
        for regex, musts in regexes:
            for match in regex.finditer(text):
                value = match.group(1) if regex.groups else match.group(0)
                if not all(m.search(value) for m in musts):
                    continue
                value = value.lower() if spec.case == "lower" else value.upper() if spec.case == "upper" else value
                if spec.type == "int":
                    if not value.isdigit():
                        continue
                    found.append(int(value))
                else:
                    found.append(value)
        return found

    def _codes(self, text: str) -> list[str]:
        codes: list[str] = []
        if self._code_pattern is not None:
            codes += [(m.group(1) if self._code_pattern.groups else m.group(0)).upper()
                      for m in self._code_pattern.finditer(text)]
        known, canonical = self._known_codes
        if known is not None:
            codes += [canonical[m.group(1).upper()] for m in known.finditer(text)]
        return codes

    def _services(self, query: str) -> list[str]:
        matches = list(self._service.finditer(query)) if self._service is not None else []
        canonical = {s.lower(): s for s in self.vocabulary.services}
        found: list[tuple[int, str]] = [(m.start(), canonical.get(m.group(1).lower(), m.group(1))) for m in matches]
        taken = [(m.start(), m.end()) for m in matches]
        lowered = query.lower()
        aliases = {alias.lower(): service for alias, service in self.vocabulary.service_aliases.items() if alias}
        for alias in sorted(aliases, key=len, reverse=True):  # longest first: 支付网关 before 网关
            start = lowered.find(alias)
            while start != -1:
                end = start + len(alias)
                if not any(s < end and start < e for s, e in taken):
                    found.append((start, aliases[alias]))
                    taken.append((start, end))
                start = lowered.find(alias, end)
        return _unique([service for _, service in sorted(found)])
