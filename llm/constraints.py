"""Per-call decoding constraints: values fields may take in this call only, applied to the grammar, not the prompt.

Some limits are facts of one session, not of a contract: an Executor may cite only the invocations this session
recorded, each under the tool that answered it. Putting them in the signature would change DSPy's system prompt
(it prints the output schema) on every session and defeat prompt-state reuse; a model that decodes under a grammar
can take them instead. Engines that build grammars (the local llama.cpp engine) read them; other engines ignore
them, and the Gatekeeper checks every citation either way.

    with constrain(object_variants={"EvidenceBinding": [
        {"tool_name": ["query_order"], "source_invocation_ids[]": [7]},
        {"tool_name": ["query_logs"], "source_invocation_ids[]": [8, 9]},
    ]}):
        prediction = predictor(...)

`field_enums` narrows a field wherever it occurs; `object_variants` turns every object of a `$defs` title into a
choice between copies, each with its own enums, so values that belong together stay together. Field names follow
`SchemaBounds.field_limits`: a property name, `name[]` for the items of an array, `Title.name`.
Pure: no I/O, no DSPy.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

Enums = tuple[tuple[str, tuple[Any, ...]], ...]
Variants = tuple[tuple[str, tuple[Enums, ...]], ...]


@dataclasses.dataclass(frozen=True)
class Constraints:
    """The constraints of one call (hashable, so grammars built from them can be cached)."""

    field_enums: Enums = ()
    object_variants: Variants = ()

    def __bool__(self) -> bool:
        return bool(self.field_enums or self.object_variants)


NO_CONSTRAINTS = Constraints()
# A frozen dataclass of tuples: immutable, so sharing it as the default is safe.
_current: contextvars.ContextVar[Constraints] = contextvars.ContextVar(
    "evigate_constraints",
    default=NO_CONSTRAINTS,
)


def _enums(mapping: Mapping[str, Sequence[Any]]) -> Enums:
    return tuple(sorted((name, tuple(values)) for name, values in mapping.items() if values))


@contextlib.contextmanager
def constrain(
    field_enums: Mapping[str, Sequence[Any]] | None = None,
    object_variants: Mapping[str, Sequence[Mapping[str, Sequence[Any]]]] | None = None,
) -> Iterator[Constraints]:
    """Within the block, decoding obeys these constraints (added to any in force; empty lists constrain nothing)."""
    outer = _current.get()
    enums = dict(outer.field_enums)
    enums.update(_enums(field_enums or {}))
    variants = dict(outer.object_variants)
    for title, choices in (object_variants or {}).items():
        kept = tuple(_enums(choice) for choice in choices if _enums(choice))
        if kept:
            variants[title] = kept
    token = _current.set(Constraints(tuple(sorted(enums.items())), tuple(sorted(variants.items()))))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def current_constraints() -> Constraints:
    """The constraints in force for the calling context (empty outside any `constrain` block)."""
    return _current.get()
