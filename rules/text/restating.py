"""Whether a claim restates an excerpt, and whether a value it writes stands where the excerpt has another.

`claim.entity_grounding` uses these to tell a claim that repeats a quoted line with one value changed ("0/1 Running"
for the quoted "1/1 Running") from one that repeats the line, leaves a column out and names something else beside
it ("… 0/3 nodes are available (pod web-7d4b9c-x2k5p)"): only the first writes a value *in the place* of another.
"""

from __future__ import annotations

import re
from typing import Literal

from evigate.rules.text.entity import Entity
from evigate.rules.text.normalize import block_coverage, compact, fold
from evigate.rules.thresholds import THRESHOLDS

RESTATES_COVERAGE = THRESHOLDS.text.restates_coverage
"""A claim whose text covers this share of a verbatim excerpt restates it: its values must be the excerpt's."""

MIN_RESTATED_CHARS = THRESHOLDS.text.min_restated_chars
"""An excerpt with fewer characters left (once its values are set aside) is too short to tell restating from
topical overlap."""

CONTEXT_CHARS = THRESHOLDS.text.context_chars
"""How much of the text next to a value (compacted) must match for a written value to stand in the place of one."""

NAME_KINDS = frozenset({"service", "identifier"})
"""Kinds that are all names of things, told apart only by shape (`ip-10-0-1-5` is read as an identifier,
`web-7d4b9c` as a service): a claim that writes one for the other still swapped a name."""

_WORD = re.compile(r"[^\W_]+")

Restatement = Literal["in_order", "reordered"]


def restatement(rest: str, text: str) -> Restatement | None:
    """How the claim ``text`` repeats the excerpt's remaining words ``rest``: in order (block coverage), with its
    words in another order (columns or clauses rearranged: "Running, 0/1, worker-7c9f"), or not at all."""
    needle = compact(fold(rest))
    if len(needle) < MIN_RESTATED_CHARS:
        return None
    if block_coverage(needle, compact(fold(text))) >= RESTATES_COVERAGE:
        return "in_order"
    words = _WORD.findall(fold(rest))
    said = set(_WORD.findall(fold(text)))
    total = sum(map(len, words))
    covered = sum(len(word) for word in words if word in said)
    return "reordered" if total >= MIN_RESTATED_CHARS and covered >= RESTATES_COVERAGE * total else None


def is_key(entity: Entity, excerpt: str) -> bool:
    """Whether a name is only a field's key in the excerpt (`"db_pool_active": …`, `level=`): a claim that says
    what the field holds need not repeat its key, so leaving it out is no swapped value."""
    if entity.kind not in NAME_KINDS:
        return False
    keys = re.finditer(rf"(?<![\w-]){re.escape(entity.text)}[\"']?\s*[:=]", excerpt)
    return sum(1 for _ in keys) == excerpt.count(entity.text)


def _token(entity: Entity) -> str:
    """A value as a token: numbers not inside "0/1", names also after "/" (`ReplicaSet/web-7d4b9c`)."""
    before = r"[\w./-]" if entity.kind == "number" else r"[\w.-]"
    return rf"(?<!{before}){re.escape(entity.text)}(?![\w./-])"


def without(excerpt: str, entity: Entity) -> str:
    """The excerpt with one of its values removed as a token."""
    return re.sub(_token(entity), " ", excerpt)


def _contexts(text: str, entity: Entity) -> list[tuple[str, str]]:
    """(compacted text before, compacted text after) each occurrence of a value, CONTEXT_CHARS long at most."""
    found = []
    for match in re.finditer(_token(entity), text):
        before = compact(fold(text[:match.start()]))[-CONTEXT_CHARS:]
        after = compact(fold(text[match.end():]))[:CONTEXT_CHARS]
        found.append((before, after))
    return found


def in_place(new: Entity, text: str, old: Entity, excerpt: str) -> bool:
    """Whether the claim writes ``new`` where the excerpt has ``old``: the same words right before or right after
    it. A value the claim adds elsewhere (a name in brackets, a subject in front) while leaving ``old`` out is
    no swap."""
    olds = _contexts(excerpt, old)
    return any(before == old_before or after == old_after
               for before, after in _contexts(text, new) for old_before, old_after in olds)
