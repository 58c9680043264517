"""The entity reader's patterns: one alternation of entity shapes, plus the vocabulary of ``terms.yaml``.

Kept apart from :mod:`evigate.rules.text.entities` (which reads texts with them; finding an entity in evidence is
:mod:`evigate.rules.text.occurrence`) so that each file stays readable. Order matters in :data:`ENTITY`: at
each position the first shape that matches wins.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml

from evigate.rules.text.numbers import NUMBER_WORDS, UNITS, WORD_UNITS

EntityKind = Literal["number", "time", "error_code", "reason", "identifier", "service", "version", "address"]
ENTITY_KINDS: tuple[EntityKind, ...] = (
    "number", "time", "error_code", "reason", "identifier", "service", "version", "address",
)


@lru_cache(maxsize=1)
def terms() -> dict[str, Any]:
    """The entity reader's vocabulary (``terms.yaml`` shipped beside this module)."""
    text = resources.files("evigate.rules.text").joinpath("terms.yaml").read_text("utf-8")
    return yaml.safe_load(text)


def word_set(key: str) -> frozenset[str]:
    """One list of ``terms.yaml`` as a set."""
    return frozenset(str(word) for word in terms()[key])


APPROXIMATE_BEFORE = re.compile(
    r"(?:约|大约|大概|将近|接近|近|超过|逾|不到|不足|高于|低于|~|≈|about|approx\.?|approximately|around|nearly|"
    r"over|more than|less than|under|above|below|up to|>=|<=|(?<![A-Za-z0-9\-\"'])>|<|≥|≤)\s*$",
    re.IGNORECASE,
)
APPROXIMATE_AFTER = re.compile(r"^\s*(?:左右|以上|以下|多|余|\+|or more|or so)", re.IGNORECASE)

_B = r"(?<![A-Za-z0-9_\-.])"  # a name starts here
_E = r"(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"  # and ends here
# One alternation, scanned once: at each position the first alternative that matches wins, so a service name
# swallows its digits ("db-3" is not the number 3) and a timestamp is not three numbers.
ENTITY = re.compile("|".join([
    r"(?P<cn_date>(?:(?P<year>\d{4})年)?(?P<month>\d{1,2})月(?P<day>\d{1,2})[日号])",
    r"(?P<datetime>(?<!\d)\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?!\d))",
    r"(?P<ipv4>(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?:/\d{1,2})?(?![\d.]|\.\d))",
    r"(?P<clock>(?<![\d:])\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?![\d:]))",
    r"(?P<digit_groups>(?<![\w.\-])\d+(?:-\d+){2,}(?![\w\-]))",
    r"(?P<ipv6>(?<![0-9A-Za-z:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|"
    r"(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{0,4}::(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{1,4})(?![0-9A-Za-z:]))",
    r"(?P<uuid>(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"(?![0-9A-Za-z]))",
    rf"(?P<version>{_B}(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z][A-Za-z0-9]*)*-)?(?:v\d+(?:\.\d+)+|\d+(?:\.\d+){{2,3}})"
    r"(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![A-Za-z0-9_]|\.\d))",
    r"(?P<error_code>(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![A-Za-z0-9_]))",
    rf"(?P<dotted>{_B}(?!\d+\.\d+-[a-z]{{3,}}(?:-[a-z]+)*(?![\w.\-]))(?=[\w.]*[\-_])[A-Za-z0-9][\w\-]*(?:\.[A-Za-z0-9][\w\-]*)+{_E})",
    r"(?P<dashed_code>(?<![A-Za-z0-9_\-])[A-Z]{2,}-\d{2,}(?![A-Za-z0-9_\-]))",
    r"(?P<exception>(?<![A-Za-z0-9_.])(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)"
    r"(?![A-Za-z0-9_]))",
    r"(?P<hex_id>(?<![0-9A-Za-z_])(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}(?![0-9A-Za-z_]))",
    r"(?P<prefixed_id>(?<![A-Za-z0-9_\-])[A-Za-z]{1,12}[-_]?\d{3,}(?:[-_][A-Za-z0-9]+)*(?![A-Za-z0-9_]))",
    r"(?P<camel>(?<![A-Za-z0-9_])(?:[A-Z]{2,}(?=[A-Z][a-z]))?[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*(?![A-Za-z0-9_]))",
    rf"(?P<snake>{_B}[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*_[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*{_E})",
    rf"(?P<lower_camel>{_B}[a-z]+[0-9]*(?:[A-Z][a-z0-9]*)+{_E})",
    rf"(?P<service>{_B}[a-z][a-z0-9]*(?:-[a-z0-9]+)+{_E})",
    r"(?P<ratio>(?<![\w./\-])\d+/\d+(?![\w/]|\.\d))",
    r"(?P<multiplier>(?<![A-Za-z0-9_.])[x×](?P<times>\d+(?:\.\d+)?)(?![A-Za-z0-9_]|\.\d))",
    rf"(?P<number>(?<![A-Za-z0-9_.])(?<![A-Za-z0-9]-)(?P<integer>[1-9]\d{{0,2}}(?:,\d{{3}})+|\d+)(?:\.(?P<fraction>\d+))?"
    rf"(?:\s?(?P<unit>(?i:{UNITS}))(?![A-Za-z])|(?P<minute>[mM])(?![A-Za-z])|(?P<word_unit>{WORD_UNITS})(?![A-Za-z0-9_])"
    rf"|(?P<compound>-[a-z]{{3,}}(?:-[a-z]+)*)(?![A-Za-z0-9_])|(?![A-Za-z0-9_]|-[A-Za-z0-9])))",
    rf"(?P<mixed>{_B}(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{{4,}}{_E})",
    r"(?P<quoted>(?P<quote>[`'\"“「])(?P<quoted_name>[A-Za-z][A-Za-z0-9]{1,40})(?:[`'\"”」])(?![A-Za-z]))",
]))
KIND_OF_GROUP: dict[str, EntityKind] = {
    "datetime": "time", "clock": "time", "uuid": "identifier", "error_code": "error_code",
    "dashed_code": "error_code", "exception": "error_code", "hex_id": "identifier", "prefixed_id": "identifier",
    "service": "service", "ipv4": "address", "ipv6": "address", "version": "version", "camel": "reason",
    "snake": "identifier", "lower_camel": "identifier", "mixed": "identifier", "quoted": "identifier",
    "digit_groups": "identifier", "dotted": "identifier",
}
CAMEL_HUMPS = re.compile(r"[A-Z][a-z0-9]")
LABEL_AFTER_CLAIM = re.compile(r"[ \t]?([A-Za-z]{3,})(?![A-Za-z])")
LABEL_BEFORE_CLAIM = re.compile(r"(?<![A-Za-z])([A-Za-z]{3,})[ \t]*[:=]?[ \t]*$")


@lru_cache(maxsize=1)
def status_pattern() -> re.Pattern[str]:
    statuses = sorted(word_set("statuses"), key=len, reverse=True)
    return re.compile(rf"(?<![A-Za-z0-9_\-])(?:{'|'.join(map(re.escape, statuses))})(?![A-Za-z0-9_\-])")


@lru_cache(maxsize=1)
def namespace_pattern() -> re.Pattern[str]:
    keywords = "|".join(map(re.escape, sorted(word_set("name_keywords"), key=len, reverse=True)))
    name = r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,62}"
    # A plain word beside "namespace" is a name only in the forms operators write names in: "in namespace X",
    # "namespace: X", "-n X", "命名空间 X", "the X namespace" — never "targets namespace", "namespace returned".
    lead = r"(?:(?<![A-Za-z])(?:in|into|from|to|of)\s+)"
    return re.compile(
        rf"(?:(?:{lead}(?:{keywords})\s+|(?<![A-Za-z0-9_\-.])(?:{keywords})\s*[:=]\s*|(?<![A-Za-z0-9_\-.])"
        rf"(?:-n|--namespace)\s+|(?:命名空间|容器|节点|集群|存储过程|队列|主题)\s*)[`'\"“]?(?P<after>{name})|"
        rf"(?:(?<![A-Za-z])(?:in|into|from|to|of|the)\s+)(?:the\s+)?(?P<before>{name})(?=[`'\"”]?\s*(?:{keywords})(?![A-Za-z])))",
        re.IGNORECASE,
    )


def is_common_compound(word: str) -> bool:
    """Whether a hyphenated word is ordinary English (rate-based, self-healing, two-week, hard-fought), not a name.

    Without digits: a measure or an ordinal (its first part a number word: two-week, three-year-old, second-half)
    at any length; at two parts, a known prefix or suffix, or an irregular participle after the hyphen (hard-fought,
    home-grown). A regular "-ed" is not enough: operators name things so (prometheus-operated).
    """
    if word in word_set("hyphenated_words"):
        return True
    parts = word.split("-")
    if any(char.isdigit() for char in word):
        return False
    if parts[0] in NUMBER_WORDS or parts[0] in word_set("hyphen_measure_words"):
        return True
    if len(parts) != 2:
        return False
    first, last = parts
    return (first in word_set("hyphen_prefixes") or last in word_set("hyphen_suffixes")
            or last in word_set("hyphen_participles"))


EVENT_SPAN = re.compile(r"[x×]\d+\s+over\s*$")
"""kubectl's "(x5 over 66m)": the event repeated 5 times within 66 minutes; "over" is no approximation there."""
