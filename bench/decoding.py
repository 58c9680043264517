"""evigate's own schema decoder against llguidance and llama.cpp's grammars, on the agents' real calls.

What it measures: the program answers ``--query`` (default: two demo questions) on the embedded model, and every
call an agent makes to the local engine is captured with its per-call constraints (the Executor's citable
invocations). Each captured call — Executor, Verifier, Composer — is then decoded again, interleaved, by
  1. structured  — `llm/schema_decoder`: code writes keys, brackets and constants, the model picks values (default);
  2. grammar     — greedy decoding with llama.cpp's GBNF grammar of the same bounded schema checking each token;
  3. llguidance  — greedy decoding under llguidance's token masks with forced-token fast-forward
                   (`bench/llguidance_decoder.py`), same bounded schema (maxLength, maxItems, enums),
once to warm the prompt state and ``--repeats`` timed times, so every mode reads the same prompt from the same
cached state and the figures compare decoding. Printed per agent and mode: median seconds per call, completion
tokens, tokens per second, and the share of outputs that parse and validate against the bounded schema.

Rerun:  .venv/bin/python bench/decoding.py [--repeats 2] [--query "…" …]   (needs `pip install llguidance`, in the
dev extra). On an idle 2-core machine run nothing else meanwhile; the figures name the load they ran under.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from evigate.llm.engine import LlamaCppEngine
from evigate.llm.prefix_reuse import prime, remember
from evigate.llm.requests import chat_messages, response_format_of
from evigate.llm.runtime import threads_for_next_call, use_threads
from evigate.llm.schema_bounds import bound_json_schema
from evigate.modules.program import DiagnosisProgram

DEFAULT_QUERIES = ("订单 123 支付失败，ERR_TIMEOUT 是什么原因？", "Why did order 789 fail to deduct inventory?")
MODES = ("structured", "grammar", "llguidance")


@dataclass
class Captured:
    engine: LlamaCppEngine  # the engine of that call: bound to its constraints, if it had any
    request: Any

    @property
    def agent(self) -> str:
        json_format = response_format_of(self.request)
        properties = (json_format.schema or {}).get("properties", {}) if json_format else {}
        return next(iter(properties), "free text").removesuffix("_output")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--query", action="append", help="a question (repeatable); default: two demo questions")
    args = parser.parse_args()
    os.environ.setdefault("EVIGATE_PREFIX_CACHE", "off")  # RAM states only: every mode starts from the same place

    program = DiagnosisProgram.from_settings(database=Path(tempfile.mkdtemp(prefix="evigate-bench-")) / "e.duckdb")
    calls: list[Captured] = []
    with _capture(calls):
        for query in args.query or DEFAULT_QUERIES:
            program(query=query)
    calls = [call for call in calls if response_format_of(call.request) is not None]
    load = os.getloadavg()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load[0]:.1f}/{load[1]:.1f}; "
        f"model {calls[0].engine.model if calls else '-'}; {len(calls)} captured calls "
        f"({', '.join(sorted({c.agent for c in calls}))}); {args.repeats} timed decode(s) per call and mode\n"
    )
    rows: dict[tuple[str, str], list[tuple[float, int, bool]]] = defaultdict(list)
    for call in calls:
        for attempt in range(args.repeats + 1):
            for mode in MODES:  # interleaved: a busy spell on the machine hits every mode alike
                row = _decode(call, mode)
                if attempt:  # the first decode only warms the prompt state
                    rows[(call.agent, mode)].append(row)
    print(f"{'agent':<10}{'mode':<12}{'calls':>6}{'s/call':>9}{'tokens':>8}{'tok/s':>8}{'valid':>8}")
    for (agent, mode), results in sorted(rows.items()):
        seconds = statistics.median(r[0] for r in results)
        tokens = statistics.median(r[1] for r in results)
        rate = sum(r[1] for r in results) / max(sum(r[0] for r in results), 1e-9)
        valid = sum(r[2] for r in results) / len(results)
        print(f"{agent:<10}{mode:<12}{len(results):>6}{seconds:>9.2f}{tokens:>8.0f}{rate:>8.1f}{valid:>8.0%}")
    for mode in MODES[1:]:
        ours = sum(r[0] for (_, m), rs in rows.items() if m == "structured" for r in rs)
        theirs = sum(r[0] for (_, m), rs in rows.items() if m == mode for r in rs)
        print(f"\nall calls: {mode} takes {theirs / max(ours, 1e-9):.2f}x the structured decoder's time", end="")
    print()


@contextmanager
def _capture(calls: list[Captured]) -> Iterator[None]:
    """Record every request the local engines serve, with the engine (and so the constraints) that served it."""
    original = LlamaCppEngine.complete

    def recording(self: LlamaCppEngine, request: Any) -> Any:
        calls.append(Captured(self, request))
        return original(self, request)

    LlamaCppEngine.complete = recording  # type: ignore[method-assign]
    try:
        yield
    finally:
        LlamaCppEngine.complete = original  # type: ignore[method-assign]


def _decode(call: Captured, mode: str) -> tuple[float, int, bool]:
    engine, request = call.engine, call.request
    schema = bound_json_schema(response_format_of(request).schema, engine.decoding_bounds())
    budget = request.config.max_tokens or engine.default_max_tokens
    started = time.perf_counter()
    if mode == "llguidance":
        text, tokens = _decode_llguidance(engine, request, schema, budget)
    else:
        engine.structured = mode == "structured"
        try:
            response = engine.complete(request)
        finally:
            engine.structured = True
        text, tokens = response.message.text or "", response.usage.output_tokens
    seconds = time.perf_counter() - started
    return seconds, tokens, _valid(text, schema)


def _decode_llguidance(engine: LlamaCppEngine, request: Any, schema: dict[str, Any], budget: int) -> tuple[str, int]:
    from llguidance_decoder import generate_llguidance

    loaded = engine.loaded()
    messages = chat_messages(request, merge_system_into_user=engine.merge_system_into_user)
    with loaded.lock:  # as the engine runs a call: threads chosen, prompt states primed and kept
        use_threads(loaded.llama, engine.n_threads or threads_for_next_call())
        prompt = loaded.chat_prompt(messages)
        if prompt is None:
            raise SystemExit("the loaded model has no chat template this bench can read")
        cache = loaded.prefix_cache
        if cache is not None:
            prime(loaded.llama, cache, prompt)
        try:
            generation = generate_llguidance(loaded.llama, prompt, schema, max_tokens=budget)
        finally:
            if cache is not None:
                remember(loaded.llama, cache)
    return generation.text, generation.completion_tokens


def _valid(text: str, schema: dict[str, Any]) -> bool:
    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError):
        return False
    return True


if __name__ == "__main__":
    main()
