"""A question's misspelt names, read as the domain's (issue 18: questions as operators type them at 3 a.m.).

"paymnet-service 九点半大量失败" names no service the domain knows, so the Planner had no service to count errors
for, the steps queried a service with no records, and no line of payment-service was about the question: measured on
train (typo-mixed, code alone), 6 of 7 such questions confirmed nothing. ``read_names`` reads every name-shaped word
(a word joined by "-" or "_": a service, an error code, a metric) that is not one of the vocabulary's names but is
within a few edits of exactly one of them as that name: ``paymnet-service`` → ``payment-service``, ``ERR_DEADLOK`` →
``ERR_DEADLOCK``. A word as far from two names, or farther than ``misspellingShare`` edits per character (at least
one), is left as written: an unknown name ("search-service", "ERR_KAFKA_LAG") stays unknown. Pure code; the program
records each reading in the audit (``query_reading``).
"""

from __future__ import annotations

import math
import re

from rapidfuzz.distance import OSA

from evigate.rules.text.vocabulary import EntityVocabulary
from evigate.rules.thresholds import THRESHOLDS
from evigate.signatures import NameReading, QueryReading

_NAME_SHAPED = re.compile(r"(?<![A-Za-z0-9_.\-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?![A-Za-z0-9_\-])")
"""A word joined by "-" or "_" (payment-service, ERR_TIMEOUT, slow_query_count): what a name is written as. ASCII
bounds, so that a name written against Chinese text ("报ERR_DEADLOK") is still a word."""


def read_names(query: str, vocabulary: EntityVocabulary | None, share: float = THRESHOLDS.text.misspelling_share
               ) -> QueryReading:
    """``query`` with every misspelt name read as the vocabulary's (see the module docstring)."""
    known = vocabulary.names if vocabulary else {}
    folded = {name.casefold(): name for name in known if _NAME_SHAPED.fullmatch(name)}
    parts: list[str] = []
    corrections: list[NameReading] = []
    last = 0
    for match in _NAME_SHAPED.finditer(query) if folded else ():
        word = match.group(0)
        if word.casefold() in folded:
            continue
        name = _nearest(word.casefold(), folded, share)
        if name is None:
            continue
        parts += [query[last:match.start()], name]
        corrections.append(NameReading(written=word, read_as=name))
        last = match.end()
    return QueryReading(original=query, read_as="".join([*parts, query[last:]]), corrections=corrections)


def _nearest(word: str, known: dict[str, str], share: float) -> str | None:
    """The one known name within its allowed edits of ``word``; None when none is, or two are equally near."""
    best: list[tuple[int, str]] = []
    for folded, name in known.items():
        allowed = max(1, math.floor(len(folded) * share))
        if abs(len(folded) - len(word)) > allowed:
            continue
        distance = OSA.distance(word, folded, score_cutoff=allowed)
        if distance <= allowed:
            best.append((distance, name))
    if not best:
        return None
    best.sort()
    if len(best) > 1 and best[0][0] == best[1][0]:
        return None
    return best[0][1]
