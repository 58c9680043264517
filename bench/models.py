"""Benchmark the installed local GGUF candidates on this machine and recommend the default.

For each installed candidate (evigate.llm.models.LOCAL_MODELS) it measures, through LlamaCppEngine:
  - load time (file already in the OS page cache after resolution),
  - prompt tokens per call of a DSPy JSONAdapter claim-extraction prompt, and prompt-eval tokens/s,
  - decode tokens/s free vs JSON-schema constrained (same prompt, wall clock after prompt evaluation),
  - prompt cache: a cold call, a warm call sharing the prompt prefix, and two signatures alternating
    with and without prompt-state reuse (evigate.llm.prefix_cache, 256 MB of RAM states; disk persistence off here),
  - quality on a fixed Chinese claim-extraction prompt: valid JSON (strict json.loads), schema-valid,
    invocation ids taken from the input, evidence excerpts verbatim in the cited tool output, Chinese text.
Qwen also gets a string-bound sweep (maxLength 128 / 512 / 1000) to show what the bound costs.

Rerun:  /work/venv/bin/python bench/models.py [--models qwen2.5-coder-0.5b smollm2-135m] [--quick]
Prints what it measured on which model and machine; greedy decoding, so reruns give the same text.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import dspy
import pydantic
from dspy.lm15 import Config, Message, Request

from evigate.errors import ModelError
from evigate.llm.engine import LlamaCppEngine
from evigate.llm.models import LOCAL_MODELS, resolve_local_model
from evigate.llm.runtime import default_threads, perf_counters, unload_all
from evigate.llm.schema_bounds import SchemaBounds

TOOL_OUTPUTS = {
    101: (
        "query_order",
        '{"order_id": "123", "status": "FAILED", "error_code": "ERR_TIMEOUT", "channel": "bank-gateway", '
        '"amount": "99.00 CNY", "created_at": "2024-05-01 12:00:00"}',
    ),
    102: (
        "query_logs",
        "2024-05-01 12:00:03 ERROR payment-service order=123 调用 bank-gateway 超时 "
        "(timeout after 5300ms) ERR_TIMEOUT\n"
        "2024-05-01 12:00:03 WARN payment-service retry 1/1 for order=123 failed",
    ),
    103: ("query_metrics", "bank-gateway 12:00-12:05 p99 延迟 5.3 秒，错误率 12%，同期 QPS 正常"),
}
QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
MAX_TOKENS = 400


class Evidence(pydantic.BaseModel):
    tool_name: str
    source_invocation_ids: list[int]
    evidence_excerpt: str


class Claim(pydantic.BaseModel):
    claim_text: str
    claim_type: Literal["symptom", "root_cause", "impact", "context"]
    evidence: list[Evidence]


class Extraction(pydantic.BaseModel):
    claims: list[Claim]


class ExtractClaims(dspy.Signature):
    """根据工具调用结果，用中文写出有证据支持的事实结论（claims）。每条结论必须注明来源工具调用的 id
    （source_invocation_ids，只能用输入中出现的 id），并从该工具输出中逐字摘录证据（evidence_excerpt）。"""

    query: str = dspy.InputField(desc="用户的问题")
    tool_results: str = dspy.InputField(desc="工具调用记录：id、工具名、输出")
    extraction: Extraction = dspy.OutputField()


class Verdict(pydantic.BaseModel):
    supported: bool
    reason: str


class CheckClaim(dspy.Signature):
    """Decide whether the claim is directly supported by the tool output, and say why in one sentence."""

    claim: str = dspy.InputField()
    tool_output: str = dspy.InputField()
    verdict: Verdict = dspy.OutputField()


def tool_results_text() -> str:
    return "\n".join(f"[invocation {i}] {name}: {out}" for i, (name, out) in TOOL_OUTPUTS.items())


def messages_for(signature: type[dspy.Signature], **inputs: str) -> tuple[str, list[Message]]:
    """The exact system + user text DSPy's JSONAdapter sends for `signature`."""
    formatted = dspy.JSONAdapter().format(signature, demos=[], inputs=inputs)
    system = "\n\n".join(m["content"] for m in formatted if m["role"] == "system")
    users = [Message.user(m["content"]) for m in formatted if m["role"] == "user"]
    return system, users


def request_for(signature: type[dspy.Signature], constrained: bool, **inputs: str) -> Request:
    """The request DSPy would send: JSONAdapter text, plus (when constrained) the schema it derives."""
    system, users = messages_for(signature, **inputs)
    response_format = None
    if constrained:
        # What JSONAdapter hands a schema-capable LM (private in dspy 3.4.1, used here to match it exactly).
        from dspy.adapters.json_adapter import _get_structured_outputs_response_format

        schema = _get_structured_outputs_response_format(signature).model_json_schema()
        response_format = {"type": "json_schema", "schema": schema}
    return Request(
        model="local/bench",
        system=system,
        messages=tuple(users),
        config=Config(max_tokens=MAX_TOKENS, temperature=0.0, response_format=response_format),
    )


@dataclass
class Call:
    wall_s: float
    prompt_tokens: int
    prompt_evaluated: int
    prompt_eval_ms: float
    completion_tokens: int
    text: str

    @property
    def decode_tok_s(self) -> float:
        decode_s = self.wall_s - self.prompt_eval_ms / 1000
        return self.completion_tokens / decode_s if decode_s > 0 else 0.0

    @property
    def prompt_tok_s(self) -> float:
        return self.prompt_evaluated / (self.prompt_eval_ms / 1000) if self.prompt_eval_ms else 0.0


def run(engine: LlamaCppEngine, request: Request) -> Call:
    llama = engine.loaded().llama
    before = perf_counters(llama)
    started = time.perf_counter()
    response = engine.complete(request)
    wall = time.perf_counter() - started
    after = perf_counters(llama)
    return Call(
        wall_s=wall,
        prompt_tokens=response.usage.input_tokens or 0,
        prompt_evaluated=after[0] - before[0],
        prompt_eval_ms=after[2] - before[2],
        completion_tokens=response.usage.output_tokens or 0,
        text=response.message.text or "",
    )


@dataclass
class Quality:
    strict_json: bool = False
    adapter_parses: bool = False
    schema_valid: bool = False
    claims: int = 0
    ids_from_input: float = 0.0
    tool_names: float = 0.0
    verbatim: float = 0.0
    chinese: float = 0.0
    notes: list[str] = field(default_factory=list)


def judge(text: str) -> Quality:
    quality = Quality()
    try:
        dspy.JSONAdapter().parse(ExtractClaims, text)  # json_repair + fence stripping: the lenient route
        quality.adapter_parses = True
    except Exception:  # AdapterParseError and whatever json_repair raises on garbage
        pass
    try:
        data = json.loads(text)
        quality.strict_json = True
    except ValueError:
        return quality
    try:
        extraction = Extraction.model_validate(data.get("extraction") if isinstance(data, dict) else None)
        quality.schema_valid = True
    except pydantic.ValidationError:
        return quality
    bindings = [(e, c) for c in extraction.claims for e in c.evidence]
    quality.claims = len(extraction.claims)
    if not bindings:
        return quality
    quality.ids_from_input = sum(
        bool(e.source_invocation_ids) and all(i in TOOL_OUTPUTS for i in e.source_invocation_ids) for e, _ in bindings
    ) / len(bindings)
    quality.tool_names = sum(
        bool(e.source_invocation_ids)
        and all(TOOL_OUTPUTS.get(i, ("",))[0] == e.tool_name for i in e.source_invocation_ids)
        for e, _ in bindings
    ) / len(bindings)
    quality.verbatim = sum(
        bool(e.evidence_excerpt.strip())
        and any(e.evidence_excerpt in TOOL_OUTPUTS[i][1] for i in e.source_invocation_ids if i in TOOL_OUTPUTS)
        for e, _ in bindings
    ) / len(bindings)
    quality.chinese = sum(bool(re.search(r"[\u4e00-\u9fff]", c.claim_text)) for c in extraction.claims) / max(
        1, len(extraction.claims)
    )
    return quality


def bench_model(name: str, quick: bool) -> dict[str, Any]:
    unload_all()
    engine = LlamaCppEngine(name)
    size_mb = engine.model_path().stat().st_size / 2**20
    loaded = engine.loaded()
    result: dict[str, Any] = {"model": name, "size_mb": size_mb, "load_s": loaded.load_seconds}
    extract = request_for(ExtractClaims, True, query=QUERY, tool_results=tool_results_text())
    free = request_for(ExtractClaims, False, query=QUERY, tool_results=tool_results_text())

    cold = run(engine, extract)  # fresh context: the whole prompt is evaluated
    result.update(schema=cold, quality_schema=judge(cold.text))
    result["free"] = run(engine, free)
    result["quality_free"] = judge(result["free"].text)
    # Same signature, another question: everything before the question's text is a shared prefix.
    warm = request_for(ExtractClaims, True, query="订单 456 退款失败？", tool_results=tool_results_text())
    result["warm"] = run(engine, warm)
    if not quick:
        result["alternating"] = alternating(name)
    return result


def alternating(name: str) -> dict[str, float]:
    """Two signatures taking turns (as Executor and Verifier do); prompt-eval ms of the 2nd round."""
    requests = [
        request_for(ExtractClaims, True, query=QUERY, tool_results=tool_results_text()),
        request_for(CheckClaim, True, claim="bank-gateway 超时 5300ms", tool_output=TOOL_OUTPUTS[102][1]),
    ]
    figures = {}
    for cache_mb in (0, 256):
        unload_all()
        engine = LlamaCppEngine(name, prompt_cache_mb=cache_mb, persist_prefixes=False)
        engine.loaded()
        calls = [run(engine, requests[i % 2]) for i in range(4)]
        figures[f"cache{cache_mb}_round2_prompt_ms"] = sum(c.prompt_eval_ms for c in calls[2:])
        figures[f"cache{cache_mb}_round2_wall_s"] = sum(c.wall_s for c in calls[2:])
        figures[f"cache{cache_mb}_round1_wall_s"] = sum(c.wall_s for c in calls[:2])
    return figures


def bound_sweep(name: str) -> list[tuple[int, Call, Quality]]:
    rows = []
    for max_len in (128, 512, 1000):
        unload_all()
        engine = LlamaCppEngine(name, bounds=SchemaBounds(max_string_length=max_len), prompt_cache_mb=0)
        call = run(engine, request_for(ExtractClaims, True, query=QUERY, tool_results=tool_results_text()))
        rows.append((max_len, call, judge(call.text)))
    return rows


def print_report(results: list[dict[str, Any]], sweep: list[tuple[int, Call, Quality]]) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nllama.cpp threads: {default_threads()}")
    print(
        f"\nmachine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, greedy decoding;"
    )
    print(f"load average at the end {load} (other work on the machine slows every figure)")
    print(f"task: DSPy JSONAdapter claim extraction, Chinese query + 3 tool outputs, max_tokens {MAX_TOKENS}\n")
    header = (
        f"{'model':<20}{'MB':>6}{'load s':>8}{'prompt tok':>11}{'pp tok/s':>9}"
        f"{'free tok/s':>11}{'schema tok/s':>13}{'cold s':>8}{'warm s':>8}{'warm reused':>12}"
    )
    print(header)
    for r in results:
        s, f, w = r["schema"], r["free"], r["warm"]
        print(
            f"{r['model']:<20}{r['size_mb']:>6.0f}{r['load_s']:>8.2f}{s.prompt_tokens:>11}{s.prompt_tok_s:>9.0f}"
            f"{f.decode_tok_s:>11.1f}{s.decode_tok_s:>13.1f}{s.wall_s:>8.1f}{w.wall_s:>8.1f}"
            f"{w.prompt_tokens - w.prompt_evaluated:>8}/{w.prompt_tokens:<4}"
        )
    print(
        "\nquality: strict JSON / DSPy JSONAdapter parses / schema-valid / claims; per evidence binding: ids from"
        " input, tool name matches the cited ids, excerpt verbatim in a cited output; claims written in Chinese"
    )
    for r in results:
        for mode in ("schema", "free"):
            q: Quality = r[f"quality_{mode}"]
            print(
                f"  {r['model']:<20}{mode:<7} json={q.strict_json!s:<6} parses={q.adapter_parses!s:<6}"
                f" valid={q.schema_valid!s:<6} claims={q.claims:<3} ids={q.ids_from_input:>4.0%}"
                f" tools={q.tool_names:>4.0%} verbatim={q.verbatim:>4.0%} zh={q.chinese:>4.0%}"
                f" completion_tokens={r[mode].completion_tokens}"
            )
    if any("alternating" in r for r in results):
        print("\nprompt cache, two signatures alternating (A B A B), second round A B:")
        for r in results:
            a = r.get("alternating")
            if a:
                print(
                    f"  {r['model']:<20} no RAM cache: prompt eval {a['cache0_round2_prompt_ms']:.0f} ms, "
                    f"wall {a['cache0_round2_wall_s']:.1f} s | prompt-state reuse 256 MB: prompt eval "
                    f"{a['cache256_round2_prompt_ms']:.0f} ms, wall {a['cache256_round2_wall_s']:.1f} s "
                    f"(round 1 wall {a['cache0_round1_wall_s']:.1f} vs {a['cache256_round1_wall_s']:.1f} s)"
                )
    if sweep:
        print("\nstring bound sweep (qwen, schema mode): maxLength -> decode tok/s, wall s, verbatim")
        for max_len, call, q in sweep:
            print(f"  {max_len:>5}: {call.decode_tok_s:5.1f} tok/s, {call.wall_s:5.1f} s, verbatim {q.verbatim:.0%}")
    print("\nsample outputs:")
    for r in results:
        for mode in ("schema", "free"):
            print(f"  {r['model']} {mode}: {r[mode].text[:300]!r}")
    print("\nrecommendation:", recommend(results))


def recommend(results: list[dict[str, Any]]) -> str:
    def score(r: dict[str, Any]) -> tuple[float, float]:
        q: Quality = r["quality_schema"]
        return (q.schema_valid * (q.ids_from_input + q.verbatim + q.chinese), r["schema"].decode_tok_s)

    best = max(results, key=score)
    q = best["quality_schema"]
    return (
        f"{best['model']} — best grounded output (ids {q.ids_from_input:.0%}, verbatim {q.verbatim:.0%}, "
        f"Chinese {q.chinese:.0%}) at {best['schema'].decode_tok_s:.1f} schema-constrained tok/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="*", default=list(LOCAL_MODELS))
    parser.add_argument("--quick", action="store_true", help="skip the prompt-cache alternation and bound sweep")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: EVIGATE_LLAMA_THREADS or all cores)")
    parser.add_argument("--cache-only", action="store_true", help="only the prompt-cache alternation (per model)")
    args = parser.parse_args()
    if args.threads:
        os.environ["EVIGATE_LLAMA_THREADS"] = str(args.threads)
    results = []
    for name in args.models:
        try:
            resolve_local_model(name)
        except ModelError as exc:
            print(f"skipping {name}: {exc}")
            continue
        print(f"benchmarking {name} ...", flush=True)
        if args.cache_only:
            figures = alternating(name)
            print(f"  {name} {json.dumps({k: round(v, 2) for k, v in figures.items()})}", flush=True)
            continue
        results.append(bench_model(name, args.quick))
        done = results[-1]
        print(
            f"  load {done['load_s']:.2f} s, schema {done['schema'].decode_tok_s:.1f} tok/s,"
            f" free {done['free'].decode_tok_s:.1f} tok/s, quality {done['quality_schema']}",
            flush=True,
        )
    if args.cache_only:
        return
    if not results:
        raise SystemExit("no candidate model is installed")
    sweep = [] if args.quick or "qwen2.5-coder-0.5b" not in args.models else bound_sweep("qwen2.5-coder-0.5b")
    print_report(results, sweep)


if __name__ == "__main__":
    main()
