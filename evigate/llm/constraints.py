"""Per-call decoding constraints: values a field may take in this call only, applied to the grammar, not the prompt.

Some limits are facts of one session, not of a contract: an Executor may cite only the invocation ids this session
recorded, and only the tools that answered. Putting them in the signature would change DSPy's system prompt (it
prints the output schema) on every session and defeat prompt-state reuse; a model that decodes under a grammar can
take them instead. Engines that build grammars (the local llama.cpp engine) read them; other engines ignore them,
and the Gatekeeper checks citations either way.

    with constrain_fields({"tool_name": ["query_logs", "query_order"], "source_invocation_ids[]": [7, 8]}):
        prediction = predictor(...)

Names follow `SchemaBounds.field_limits`: a property name, or `name[]` for the items of an array property.
Pure: no I/O, no DSPy.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

FieldEnums = tuple[tuple[str, tuple[Any, ...]], ...]

_field_enums: contextvars.ContextVar[FieldEnums] = contextvars.ContextVar("evigate_field_enums", default=())


@contextlib.contextmanager
def constrain_fields(enums: Mapping[str, Sequence[Any]]) -> Iterator[None]:
    """Within the block, the named fields may only take the given values (empty lists are ignored)."""
    current = dict(_field_enums.get())
    current.update({name: tuple(values) for name, values in enums.items() if values})
    token = _field_enums.set(tuple(sorted(current.items())))
    try:
        yield
    finally:
        _field_enums.reset(token)


def current_field_enums() -> FieldEnums:
    """The constraints in force for the calling context (empty outside any `constrain_fields` block)."""
    return _field_enums.get()
