"""Three ways to decode the Executor's JSON on the local model, on the same prompt: time and validity.

What it measures: the headline question's round-1 Executor call (the demo world's real evidence, gathered by the
Planner's rule-chosen skill without a model call), decoded
  1. structured  — `schema_decoder`: code writes keys, brackets and constants, the model picks values (default);
  2. grammar     — every token decoded under llama.cpp's grammar from the same bounded schema;
  3. free        — no constraint at all, then DSPy's JSON adapter parse (json_repair) and the V2 contract,
each ``--repeats`` times after one warm-up call, so the system prompt and evidence are restored from the prompt
state in every timed call and the figures compare decoding only. All three read the same prompt (the sketch
prompt). Printed per mode: median seconds, completion tokens (tokens the model was fed after the prompt), tokens
evaluated in batches vs one at a time, and whether the output parsed into an ExecutorOutputV2 with claims.

Rerun:  .venv/bin/python bench/decoding.py [--repeats 2] [--query "…"]
ARCHITECTURE asked for this comparison ("unconstrained decoding plus a repairing parser … may be faster — measure
both"); on an idle 2-core machine run nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import dspy
from dspy.lm15 import Config, Message, Request

from evigate.llm.adapter import adapter_for
from evigate.llm.constraints import constrain
from evigate.llm.runtime import perf_counters
from evigate.modules.evidence_view import format_evidence, query_entities
from evigate.modules.executor import citable
from evigate.modules.program import DiagnosisProgram
from evigate.signatures import ExecutorOutputV2
from evigate.signatures.agents import WriteEvidence

DEFAULT_QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
MODES = ("structured", "grammar", "free")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--query", default=DEFAULT_QUERY)
    args = parser.parse_args()
    os.environ.setdefault("EVIGATE_PREFIX_CACHE", "off")  # RAM states only: every mode starts from the same place

    program = DiagnosisProgram.from_settings(database=Path(tempfile.mkdtemp(prefix="evigate-bench-")) / "e.duckdb")
    settings = program.settings
    plan = program.planner(query=args.query).plan
    session = program.store.start_session(args.query, settings={})
    toolbox = program.toolbox(session, 1)
    program.executor._run_plan(plan, None, toolbox)
    invocations = toolbox.invocations()
    terms = [term for values in query_entities(args.query).values() for term in values]
    evidence = format_evidence(invocations, program.executor.max_evidence_chars, focus_terms=terms)
    inputs = {"query": args.query, "evidence": evidence, "retry_context": None}
    budget = settings.models.max_tokens_for("executor")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores; query: {args.query}; skill {plan.skill}, "
        f"{len(invocations)} tool calls; executor budget {budget} tokens; {args.repeats} timed calls per mode\n"
    )
    print(f"{'mode':<12}{'seconds':>9}{'completion':>12}{'batched':>9}{'stepped':>9}  parsed")
    lm = program.lm_for("executor")  # the program's own local LM: same bounds, budgets and prompt states
    adapter = adapter_for(lm)  # the sketch prompt, read by every mode
    for mode in MODES:
        lm.engine.structured = mode == "structured"
        rows = []
        for attempt in range(args.repeats + 1):
            with constrain(object_variants={"EvidenceBinding": citable(invocations)}):
                row = _call(lm, adapter, inputs, mode, budget)
            if attempt:  # the first call only warms the prompt state
                rows.append(row)
        seconds = statistics.median(r[0] for r in rows)
        last = rows[-1]
        print(f"{mode:<12}{seconds:>9.1f}{last[1]:>12}{last[2]:>9}{last[3]:>9}  {last[4]}")


def _call(
    lm: dspy.LM, adapter: Any, inputs: dict[str, Any], mode: str, budget: int
) -> tuple[float, int, int, int, str]:
    engine = lm.engine
    llama = engine.loaded().llama
    before = perf_counters(llama)
    started = time.perf_counter()
    if mode == "free":
        messages = adapter.format(WriteEvidence, demos=[], inputs=inputs)
        request = Request(
            model=lm.model,
            system=messages[0]["content"],
            messages=tuple(Message.user(m["content"]) for m in messages[1:]),
            config=Config(max_tokens=budget, temperature=0.0),
        )
        response = engine.complete(request)
        text, tokens = response.message.text or "", response.usage.output_tokens
    else:
        with dspy.context(lm=lm, adapter=adapter):
            dspy.Predict(WriteEvidence)(**inputs)
        text, tokens = lm.history[-1]["outputs"][0], lm.history[-1]["usage"]["completion_tokens"]
    seconds = time.perf_counter() - started
    after = perf_counters(llama)
    return seconds, tokens, int(after[0] - before[0]), int(after[1] - before[1]), _verdict(adapter, text)


def _verdict(adapter: Any, text: str) -> str:
    try:
        output = adapter.parse(WriteEvidence, text)["executor_output"]
        output = output if isinstance(output, ExecutorOutputV2) else ExecutorOutputV2.model_validate(output)
    except Exception as exc:  # what a repairing parser cannot save is the point of the comparison
        return f"no: {type(exc).__name__}"
    return f"yes, {len(output.claims)} claim(s)"


if __name__ == "__main__":
    main()
