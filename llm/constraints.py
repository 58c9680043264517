"""Per-call decoding constraints: values fields may take in this call only, applied to the grammar, not the prompt.

Some limits are facts of one session, not of a contract: an Executor may cite only the invocations this session
recorded, each under the tool that answered it. Putting them in the signature would change DSPy's system prompt
(it prints the output schema) on every session and defeat prompt-state reuse; a model that decodes under a grammar
can take them instead. Engines that build grammars (the local llama.cpp engine) read them; other engines never see
them, and the Gatekeeper checks every citation either way.

They go in as an argument: `evigate.llm.lm.constrained_lm` returns the LM of one call, bound to its constraints,
and the caller hands it to the predictor (``predictor(..., lm=constrained_lm(lm, constraints))``).

    constraints = Constraints.create(object_variants={"EvidenceBinding": [
        {"tool_name": ["query_order"], "source_invocation_ids[]": [7]},
        {"tool_name": ["query_logs"], "source_invocation_ids[]": [8, 9]},
    ]})

Not through DSPy's per-call ``config`` (dspy 3.4.1): DSPy turns every LM keyword into a field of the canonical
request, refuses a key lm15 has no verdict for (LMUnsupportedFeatureError), and sends the keys it does carry
(``metadata``, ``provider``, …) to an OpenAI-compatible server as request fields. The custom engine receives only
that request.

`field_enums` narrows a field wherever it occurs; `object_variants` turns every object of a `$defs` title into a
choice between copies, each with its own enums, so values that belong together stay together. Field names follow
`SchemaBounds.field_limits`: a property name, `name[]` for the items of an array, `Title.name`.
Pure: no I/O, no DSPy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
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

    @classmethod
    def create(
        cls,
        field_enums: Mapping[str, Sequence[Any]] | None = None,
        object_variants: Mapping[str, Sequence[Mapping[str, Sequence[Any]]]] | None = None,
    ) -> Constraints:
        """Constraints from plain mappings; empty value lists, and choices left empty by them, constrain nothing."""
        variants: dict[str, tuple[Enums, ...]] = {}
        for title, choices in (object_variants or {}).items():
            kept = tuple(_enums(choice) for choice in choices if _enums(choice))
            if kept:
                variants[title] = kept
        return cls(_enums(field_enums or {}), tuple(sorted(variants.items())))


# A frozen dataclass of tuples: immutable, so sharing it as the default is safe.
NO_CONSTRAINTS = Constraints()


def _enums(mapping: Mapping[str, Sequence[Any]]) -> Enums:
    return tuple(sorted((name, tuple(values)) for name, values in mapping.items() if values))
