"""The JSON adapter an agent's calls go through: DSPy's, or for the structured local engine a shorter prompt."""

from __future__ import annotations

import functools
from typing import Any

import dspy
from dspy.adapters.chat_adapter import FieldInfoWithName
from dspy.adapters.json_adapter import _get_structured_outputs_response_format
from dspy.adapters.utils import translate_field_type

from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema
from evigate.llm.sketch import sketch

_STANDARD = dspy.JSONAdapter()


class SketchJSONAdapter(dspy.JSONAdapter):
    """`dspy.JSONAdapter` whose system prompt shows the output as an example sketch instead of JSON schemas.

    The sketch is drawn from the schema the engine decodes under (DSPy's response format, bounded by `bounds`), so
    it names exactly the keys the decoder writes. Parsing, the response format sent to the engine and the user
    messages are JSONAdapter's own. Meant for an engine that enforces the schema while decoding (the local
    llama.cpp engine), where the schema text only costs prompt tokens: the Executor's system prompt went from
    1,530 to ~800 tokens, and on the 2-core CPU each fixed-prompt token also slows every later token (attention).
    """

    def __init__(self, bounds: SchemaBounds | None = None) -> None:
        super().__init__()
        self.bounds = bounds

    def format_field_structure(self, signature: type[dspy.Signature]) -> str:
        try:
            response_format = _get_structured_outputs_response_format(signature, self.use_native_function_calling)
            schema = response_format.model_json_schema()
        except Exception:  # open-ended mappings and the like: DSPy's own rendering
            return super().format_field_structure(signature)
        if self.bounds is not None:
            schema = bound_json_schema(schema, self.bounds)
        inputs = self.format_field_with_value(
            fields_with_values={
                FieldInfoWithName(name=name, info=info): translate_field_type(name, info)
                for name, info in signature.input_fields.items()
            },
            role="user",
        )
        return "\n\n".join(
            [
                "All interactions will be structured in the following way, with the appropriate values filled in.",
                "Inputs will have the following structure:",
                inputs,
                "Outputs will be a JSON object of this shape (<...> describes a value to write; a|b: one of them):",
                sketch(schema),
            ]
        ).strip()


@functools.lru_cache(maxsize=16)
def _sketch_adapter(bounds: SchemaBounds) -> SketchJSONAdapter:
    return SketchJSONAdapter(bounds)


def adapter_for(lm: Any) -> dspy.JSONAdapter:
    """The adapter for calls on `lm`: the sketch prompt when its engine decodes by schema structure, else DSPy's."""
    from evigate.llm.engine import LlamaCppEngine

    engine = getattr(lm, "engine", None)
    if isinstance(engine, LlamaCppEngine) and engine.structured and engine.fast_greedy:
        return _sketch_adapter(engine.bounds)
    return _STANDARD
