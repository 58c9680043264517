"""Names a deployment knows: services, error codes, identifiers and id patterns the entity reader must recognise.

Shape alone cannot tell that ``orders`` is a namespace or ``usp_settle_batch`` a stored procedure in every
deployment; a Domain plug-in can. An :class:`EntityVocabulary` is pure data (no I/O): the entity reader treats
each name in it as an entity wherever it occurs as a whole word, even when its shape alone would not make it one.
Give one to the Gatekeeper with :meth:`evigate.rules.Gatekeeper.with_vocabulary`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from evigate.errors import RuleConfigError


@dataclass(frozen=True)
class EntityVocabulary:
    """Known names of one deployment. ``identifiers`` holds metric names, stored procedures, namespaces, any name;
    ``id_patterns`` regular expressions whose every match is an identifier (e.g. ``ORD-\\d{6}``)."""

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
            try:
                re.compile(pattern)
            except (re.error, TypeError) as error:
                raise RuleConfigError(f"EntityVocabulary.id_patterns: {pattern!r} is not a regular expression: "
                                      f"{error}") from error

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
        alternatives = "|".join(re.escape(name) for name in sorted(self.names, key=len, reverse=True))
        return re.compile(rf"(?<![A-Za-z0-9_\-.])(?:{alternatives})(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])")

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

