"""Seconds and tokens per agent and per round of the whole pipeline on the local model, cold and warm.

What it measures: one process builds a DiagnosisProgram on the embedded defaults (local GGUF through llama.cpp,
demo world in a temporary DuckDB file) and answers the same question ``--runs`` times. Run 1 is "cold" (model
load; with the default fresh ``--prefix-dir`` no stored prompt states either); later runs are "warm" (prompt
states of earlier calls in RAM). Per-agent figures come from the audit trail's agent_step rows (latency, prompt and
completion tokens), so they are exactly what `evigate show` reports; "reused" is the prompt tokens restored from
stored states instead of evaluated. Under each run, llama.cpp's own counters split every model call into tokens
evaluated in batches (the prompt, and the fixed JSON text the structured decoder appends) and tokens decoded one
step at a time, with the seconds each took.

Rerun:  .venv/bin/python bench/pipeline.py [--runs 2] [--query "…"] [--model local/qwen2.5-coder-0.5b]
        .venv/bin/python bench/pipeline.py --runs 1 --prefix-dir DIR   # twice: the 2nd is a new process that
                                                                        # finds the system prompts on disk
Target: under 30 s per round on a 2-core machine. A round is plan -> execute -> gatekeeper -> verify (V1's loop);
the Composer runs once per question after the last round, so its seconds are printed on their own line and
counted in the question's wall time, not in a round.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from evigate.llm.engine import LlamaCppEngine
from evigate.llm.models import PREFIX_CACHE_ENV
from evigate.llm.runtime import perf_counters
from evigate.modules.program import DiagnosisProgram
from evigate.store import AuditStore

DEFAULT_QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument("--model", default=None, help="models.default override, e.g. local/qwen2.5-coder-0.5b")
    parser.add_argument("--prefix-dir", default=None, help="where system-prompt states persist (default: fresh)")
    args = parser.parse_args()
    os.environ[PREFIX_CACHE_ENV] = args.prefix_dir or tempfile.mkdtemp(prefix="evigate-prefixes-")

    workdir = Path(tempfile.mkdtemp(prefix="evigate-bench-"))
    overrides = {"models": {"default": args.model}} if args.model else {}
    started = time.perf_counter()
    program = DiagnosisProgram.from_settings(database=workdir / "evigate.duckdb", **overrides)
    setup = time.perf_counter() - started
    store: AuditStore = program.store
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"model: {program.settings.models.default}; executor mode: {program.settings.executor.mode}"
    )
    print(f"setup (settings, world build, gatekeeper): {setup:.1f} s; query: {args.query}")
    threads = os.environ.get("EVIGATE_LLAMA_THREADS") or "chosen per call from idle cores"
    print(f"stored prompt states: {os.environ[PREFIX_CACHE_ENV]}; threads: {threads}")
    print(f"load average now {os.getloadavg()[0]:.2f}\n")
    print(f"{'run':<5}{'round':<7}{'agent':<10}{'seconds':>9}{'prompt tok':>12}{'completion tok':>16}{'tok/s':>8}")
    round_seconds: dict[str, list[float]] = defaultdict(list)
    reuse: dict[str, int] = {}
    calls = _record_calls()
    for run in range(1, args.runs + 1):
        label = "cold" if run == 1 else "warm"
        calls.clear()
        began = time.perf_counter()
        result = program(query=args.query)
        wall = time.perf_counter() - began
        per_round: dict[int, float] = defaultdict(float)
        composer = 0.0
        for step in store.steps(result.session_id):
            seconds = (step["latency_ms"] or 0) / 1000
            if step["agent"] == "composer":
                composer += seconds
            else:
                per_round[step["round"]] += seconds
            speed = step["completion_tokens"] / seconds if seconds else 0.0
            print(
                f"{run:<5}{step['round']:<7}{step['agent']:<10}{seconds:>9.1f}{step['prompt_tokens']:>12}"
                f"{step['completion_tokens']:>16}{speed:>8.1f}"
            )
        for number, (batched, batch_ms, stepped, step_ms, seconds) in enumerate(calls, start=1):
            print(
                f"      call {number}: {batched} tok in batches {batch_ms / 1000:.1f} s, {stepped} tok stepped "
                f"{step_ms / 1000:.1f} s, rest {seconds - (batch_ms + step_ms) / 1000:.1f} s"
            )
        before = dict(reuse)
        reuse.update(_prefix_stats())
        restored = reuse.get("restored_tokens", 0) - before.get("restored_tokens", 0)
        print(
            f"      prompt tokens restored from stored states this run: {restored} "
            f"(disk hits so far {reuse.get('disk_hits', 0)}, RAM hits {reuse.get('ram_hits', 0)})"
        )
        for number, seconds in sorted(per_round.items()):
            round_seconds[label].append(seconds)
            print(f"      round {number} agents total: {seconds:.1f} s")
        print(f"      composer, after the last round: {composer:.1f} s")
        print(
            f"run {run} ({label}): {wall:.1f} s wall, {result.rounds} round(s), verdict {result.verdict}, "
            f"{result.output_type}\n"
        )
    for label, values in round_seconds.items():
        mean = statistics.mean(values)
        print(
            f"{label}: mean {mean:.1f} s per round over {len(values)} round(s), slowest {max(values):.1f} s; "
            f"ratio of the slowest to the 30 s target: {max(values) / 30:.2f}"
        )


def _record_calls() -> list[tuple[int, float, int, float, float]]:
    """Per model call: (tokens evaluated in batches, their ms, tokens decoded singly, their ms, call seconds)."""
    calls: list[tuple[int, float, int, float, float]] = []
    complete = LlamaCppEngine.complete

    def recorded(engine: LlamaCppEngine, request):  # type: ignore[no-untyped-def]
        llama = engine.loaded().llama
        before, began = perf_counters(llama), time.perf_counter()
        try:
            return complete(engine, request)
        finally:
            after = perf_counters(llama)
            deltas = [b - a for a, b in zip(before, after, strict=True)]
            calls.append((int(deltas[0]), deltas[2], int(deltas[1]), deltas[3], time.perf_counter() - began))

    LlamaCppEngine.complete = recorded  # type: ignore[method-assign]
    return calls


def _prefix_stats() -> dict[str, int]:
    from evigate.llm.runtime import _loaded

    totals: dict[str, int] = defaultdict(int)
    for loaded in _loaded.values():
        if loaded.prefix_cache is not None:
            for key, value in loaded.prefix_cache.stats.items():
                totals[key] += value
    return dict(totals)


if __name__ == "__main__":
    main()
