"""The entities a question names, by a :class:`~evigate.rules.text.vocabulary.Vocabulary`: what the Planner fills
skill templates with and the evidence view picks lines by. Pure regular expressions, no I/O.

The Gatekeeper's reader (:func:`~evigate.rules.text.entities.extract_entities`) reads claims strictly, by shape and
by the vocabulary's names; a question is read by the vocabulary alone, case-insensitively, with service aliases,
identifier kinds and metric hints, and with its times as :mod:`evigate.rules.text.times` reads them. Patterns use
ASCII look-arounds instead of `\\b` because Python treats CJK characters as word characters ("ERR_TIMEOUT是什么"
has no word boundary after the code).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import cached_property
from typing import Any

from evigate.rules.text.times import alternative_window, named_times, time_label, time_window
from evigate.rules.text.vocabulary import IdPattern, IdRegex, Vocabulary, alternation, plural

_ASCII_WORD = r"A-Za-z0-9_"
_CompiledId = tuple[re.Pattern[str], list[re.Pattern[str]]]


def _unique(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


class EntityExtractor:
    """`extract(query)`: the entities a question names, in order of appearance, without duplicates.

    Keys: `error_codes` (upper case), `services` (service ids; aliases map to them), one `<name>s` list per
    identifier, `metrics` (metric names hinted at), `times` ("YYYY-MM-DD HH:MM[:SS]"; bare clock times fall on
    `today`, by default the machine's day) and `time_window` ("START/END": the named times padded by 15 minutes, or
    None), plus `alternative_window` when an hour was said without a part of the day ("四点半": read 12 hours later).
    """

    def __init__(self, vocabulary: Vocabulary, today: date | None = None) -> None:
        self.vocabulary = vocabulary
        self._today = today

    @cached_property
    def _service(self) -> re.Pattern[str] | None:
        if not self.vocabulary.services:
            return None
        return re.compile(rf"(?<![a-z0-9-])({alternation(self.vocabulary.services)})(?![a-z0-9-])", re.I)

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
        return (re.compile(rf"(?<![{_ASCII_WORD}])({alternation(others)})(?![{_ASCII_WORD}])", re.I),
                {c.upper(): c.upper() for c in others})

    @cached_property
    def _identifiers(self) -> list[tuple[str, IdPattern, list[_CompiledId]]]:
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
        alternative = alternative_window(times)
        if alternative:
            entities["alternative_window"] = alternative  # "四点半": 04:30 as written, 16:30 for the census to try
        return entities

    def _ids(self, text: str, spec: IdPattern, regexes: list[_CompiledId]) -> list[Any]:
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
        # a term that only holds an alias ("数据库连接池" is the application's pool) is taken first, naming nothing
        for term in sorted({term.lower() for term in self.vocabulary.not_service_terms if term}, key=len, reverse=True):
            _take(lowered, term, taken)
        aliases = {alias.lower(): service for alias, service in self.vocabulary.service_aliases.items() if alias}
        for alias in sorted(aliases, key=len, reverse=True):  # longest first: 支付网关 before 网关
            found += [(start, aliases[alias]) for start in _take(lowered, alias, taken)]
        return _unique([service for _, service in sorted(found)])


def _take(text: str, term: str, taken: list[tuple[int, int]]) -> list[int]:
    """The starts of ``term`` in ``text`` that overlap no span in ``taken``, each added to ``taken``."""
    starts: list[int] = []
    start = text.find(term)
    while start != -1:
        end = start + len(term)
        if not any(s < end and start < e for s, e in taken):
            starts.append(start)
            taken.append((start, end))
        start = text.find(term, end)
    return starts
