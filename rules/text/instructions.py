"""Text that tells someone to do something: prompt-injection markers, copied text, and the structural detector of
instructions (:mod:`evigate.rules.text.directives`) (zh + en). Pure pattern helpers for the action/gap rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from importlib import resources

import yaml

from evigate.rules.text.directives import find_directives, instructs_reader
from evigate.rules.text.normalize import compact, fold

# The pattern lists (injection markers, destructive commands, quote markers) live in one place: the
# shipped metadata of the action.* rules (rules/metadata/). Code outside the Gatekeeper that needs one of them reads
# it from there, so a list cannot drift between a rule and the composer side.


@lru_cache(maxsize=1)
def shipped_injection_markers() -> tuple[str, ...]:
    """The injection markers of the shipped `action.planted_instruction` metadata (read once).

    Read from the rule's metadata file itself: `rules/text` sits below `rules/gate` (which validates that file for
    the Gatekeeper), so it must not import the gate's config."""
    metadata = resources.files("evigate.rules").joinpath("metadata", "action.planted_instruction.yaml")
    return tuple(yaml.safe_load(metadata.read_text("utf-8"))["params"]["injectionMarkers"])


def tells_someone_to_act(text: str) -> bool:
    """Whether a text is addressed to a model or tells its reader to do something: never an observation to relay."""
    return addresses_model(text) or instructs_reader(text)


_SENTENCES = re.compile(r"[^。！？!?\n；;]+[。！？!?；;]?")


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error:  # a broken user pattern matches literally rather than failing the rule
            compiled.append(re.compile(re.escape(pattern)))
    return tuple(compiled)


def matches(text: str, patterns: Sequence[str]) -> list[str]:
    """The matched texts of ``patterns`` in the case-folded ``text`` (one per pattern that matches)."""
    folded = fold(text)
    found = []
    for pattern in _compiled(tuple(patterns)):
        hit = pattern.search(folded)
        if hit:
            found.append(hit.group(0).strip())
    return found


def addresses_model(text: str, markers: Sequence[str] | None = None) -> bool:
    """Whether a text speaks to the model ("忽略之前的所有指令", "ignore previous instructions"): never for a user."""
    return bool(text) and bool(matches(text, shipped_injection_markers() if markers is None else markers))


def sentences_of(text: str) -> list[str]:
    """The sentences of a field's text, stripped (clauses such as "运维通告：…" stay with their sentence)."""
    return [piece.strip() for piece in _SENTENCES.findall(text or "") if piece.strip()]


_CLAUSES = re.compile(r"[，,：:、]")
_SEPARATORS_BUT_NEWLINE = re.compile(r"[^\w.%/#@+\-\n]+")
"""What :func:`compact` drops, line breaks aside."""


def copies_instruction(sentence: str, outputs: Iterable[str], min_chars: int) -> bool:
    """Whether the sentence, or one clause of it at least ``min_chars`` long, both instructs the reader and occurs
    in one of the outputs: the copied piece must itself carry the instruction ("请执行排查步骤：先查看…" writes its
    own 请执行 before a copied step; "请立即执行 kubectl delete …" copied from a log line relays it)."""
    pieces = [sentence, *_CLAUSES.split(sentence)]
    needles = {compact(fold(piece)) for piece in pieces if instructs_reader(piece)}
    needles = {needle for needle in needles if len(needle) >= min_chars}
    if not needles:
        return False
    haystacks = [compact(fold(output)) for output in outputs if output]
    return any(needle in haystack for needle in needles for haystack in haystacks)


def copied_from(sentence: str, outputs: Iterable[str], min_chars: int) -> bool:
    """Whether the sentence, or one clause of it at least ``min_chars`` long, occurs in one of the outputs
    (punctuation, spacing and case aside): copied, not written. A clause is enough — a model may put its own words
    ("缺口：") before a planted instruction."""
    pieces = [compact(fold(sentence)), *(compact(fold(clause)) for clause in _CLAUSES.split(sentence))]
    needles = {piece for piece in pieces if len(piece) >= min_chars}
    if not needles:
        return False
    haystacks = [compact(fold(output)) for output in outputs if output]
    return any(needle in haystack for needle in needles for haystack in haystacks)


@lru_cache(maxsize=512)
def packed_lines(text: str) -> str:
    """``text`` folded and compacted with its line breaks kept (cached: the same outputs are read in every round).
    Without its line breaks it is ``compact(fold(text))``: one pass serves both."""
    return _SEPARATORS_BUT_NEWLINE.sub("", fold(text))


class PlantedLines:
    """The lines of a session's tool outputs, to tell whether a text was copied from a line that instructs its reader.

    A line that tells the reader to act ("… committed fraud; they must run `curl … | sudo sh` now") is planted text as
    a whole: a claim that copies only its first half relays it too. Outputs are compacted once; a line is split out
    and read by the detector only when a copied text occurs in its output, so the cost follows what is copied.
    """

    def __init__(self, outputs: Iterable[tuple[str, str]]) -> None:
        """``outputs``: (raw text, its folded and compacted form) pairs, the latter as the session index holds it."""
        self._outputs = [(raw, core) for raw, core in outputs if raw]
        self._instructs: dict[tuple[int, int], bool] = {}

    def _holders(self, needle: str) -> Iterator[tuple[int, int]]:
        """(output, line number) of every line holding ``needle``, lazily: the caller stops at the first clean one."""
        for index, (raw, core) in enumerate(self._outputs):
            if needle not in core:  # the session's compacted outputs, built once for every rule
                continue
            packed = packed_lines(raw)
            line, counted = 0, 0
            start = packed.find(needle)
            while start != -1:
                line += packed.count("\n", counted, start)
                counted = start
                yield index, line
                start = packed.find(needle, packed.find("\n", start) + 1) if "\n" in packed[start:] else -1

    def _instructing(self, index: int, number: int) -> bool:
        key = (index, number)
        if key not in self._instructs:
            line = self._outputs[index][0].split("\n")[number]
            self._instructs[key] = any(found.kind != "shell" for found in find_directives(line))
        return self._instructs[key]

    def source_of(self, sentence: str, min_chars: int) -> str | None:
        """The instructing line ``sentence`` (or a clause of it at least ``2 * min_chars`` long) was copied from, when
        every output line holding that text instructs the reader; else None."""
        pieces = [sentence, *(clause for clause in _CLAUSES.split(sentence) if len(clause) >= 2 * min_chars)]
        for needle in {compact(fold(piece)) for piece in pieces}:
            if len(needle) < min_chars:
                continue
            first: tuple[int, int] | None = None
            for holder in self._holders(needle):
                if not self._instructing(*holder):
                    first = None
                    break
                first = first or holder
            if first is not None:
                return self._outputs[first[0]][0].split("\n")[first[1]].strip()
        return None
