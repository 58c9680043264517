"""How fast every Trace Workbench page loads, with a heavy session in the store (issue 20: each under 300 ms).

The session: ``--invocations`` tool calls (default 50) of ``--output-kb`` KB each (default 20; log lines, Chinese
and English), one claim per invocation quoting a line past the 2,000-character preview, judged by the real
Gatekeeper (so every binding has its recorded span), recorded in a DuckDB audit store. A real ``evigate serve``
app on 127.0.0.1 (uvicorn, one idle worker program) serves it; it starts as ``evigate serve`` does (templates
compiled, the start-up heap frozen) and has served nothing before the first browser load.

browser   headless Chromium (Debian's, driven over the DevTools protocol by tests/serve/cdp.py; skipped when it is
          not installed), one fresh profile. It first opens /healthz (JSON): the browser's own start-up, its network
          stack and disk cache, is no page's cost, and no template, asset or store read is involved. Then each page
          — session (/sessions/{id}), sessions (/sessions), ask (/), verify (/verify) — is loaded ``--runs`` times
          in a row (default 20) and EVERY load counts, the first included: before a page's first load the browser's
          cache is cleared, so that load fetches the page's script and style, and the session page's first load is
          the server's first page request of all. A load is timed from the navigation's start
          (``performance.timeOrigin``) to the moment the page's content is in the document and the next frame is
          about to be drawn: the page script sets ``body[data-loaded-ms]`` from ``performance.now()`` in a
          ``requestAnimationFrame`` callback — for the session page after the workbench fragment
          (/fragments/sessions/{id}) is inserted, for the sessions page after the list fragment, for ask and verify
          once the page's script has set the page up. Printed per page: the first (cold) load, p50, max, the three
          slowest; and, at p50, when the shell's response ended, DOMContentLoaded, and when the data fragment arrived.
server    then, over HTTP from a client on the same machine (httpx), ``--runs`` times each, every one counted:
          GET /sessions/{id} + GET /fragments/sessions/{id} (the shell and the whole rendered workbench), and
          GET /fragments/sessions/{id}/invocations/{n} (one call's arguments and whole 20 KB output, fetched when
          a claim or the call is opened).

Rerun:  .venv/bin/python bench/workbench.py [--invocations 50] [--output-kb 20] [--runs 20]
No model is involved: the figures are the server's, the template engine's and the browser's.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.serve.cdp: the DevTools client

from evigate.modules.program import DiagnosisProgram
from evigate.optimize.ui import free_port
from evigate.rules import Gatekeeper
from evigate.serve.app import ServeOptions, create_app
from evigate.serve.pool import DiagnosisPool
from evigate.serve.runner import ThreadedServer
from evigate.signatures import ClaimCheck, VerifierEvaluation
from evigate.store import AuditStore

SERVICES = ["pay-gateway", "order-service", "库存服务", "unionpay-channel", "risk-engine"]


def log_output(index: int, size: int) -> tuple[str, str]:
    """(output of about ``size`` characters, the line a claim quotes: placed past the preview)."""
    lines = []
    number = 0
    quoted = ""
    while sum(len(line) + 1 for line in lines) < size:
        service = SERVICES[(index + number) % len(SERVICES)]
        line = (f"2026-11-28 14:{number // 60 % 60:02d}:{number % 60:02d}.{number % 1000:03d} INFO [{service}] "
                f"trace={index:04d}{number:06d} 请求处理完成 latency={(number * 37) % 900}ms status=200")
        if number == 40:
            line = (f"2026-11-28 14:03:12.480 ERROR [{service}] trace={index:04d}000040 order={index} "
                    f"ERR_TIMEOUT upstream unionpay timeout after {5000 + index}ms (timeout=3000ms)")
            quoted = line
        lines.append(line)
        number += 1
    return "\n".join(lines), quoted


def build_session(store: AuditStore, invocations: int, output_chars: int) -> str:
    """Record the heavy session (through the store's API, judged by the real Gatekeeper); returns its id."""
    session_id = store.start_session("订单大面积支付失败，ERR_TIMEOUT 的原因是什么？ Why do payments time out?",
                                     settings={"locale": "zh", "domain": "demo"})
    claims = []
    for index in range(invocations):
        output, quoted = log_output(index, output_chars)
        recorded = store.record_invocation(session_id, 1, "query_logs", {"service": SERVICES[index % 5], "n": index},
                                           output, latency_ms=20.0 + index)
        claims.append({"claim_id": f"c{index}", "claim_type": "symptom", "support_level": "direct",
                       "claim_text": f"订单 {index} 支付超时：ERR_TIMEOUT，耗时 {5000 + index}ms",
                       "evidence_bindings": [{"source_type": "tool_trace", "tool_name": "query_logs",
                                              "source_invocation_ids": [recorded.id], "evidence_excerpt": quoted}]})
    data = {"answer_version": "executor_evidence_v2", "claims": claims}
    gate = Gatekeeper.default().validate(data, store.invocations(session_id), session_id)
    checks = [ClaimCheck(claim_id=c["claim_id"], verification="direct_observation", detail="quoted") for c in claims]
    evaluation = VerifierEvaluation(verdict="PASS", groundedness_score=1.0, claim_checks=checks,
                                    executor_structured_output=gate.normalized, gatekeeper_result=gate.result,
                                    binding_spans=gate.spans, output_type="NORMAL")
    store.merge_self_evaluation(session_id, "verifier_evaluation", evaluation.model_dump(mode="json"))
    answer = "已确认：" + "；".join(c["claim_text"] for c in claims) + "。"
    store.finish_session(session_id, output_type="NORMAL", verdict="PASS", answer=answer, rounds=1,
                         groundedness_score=1.0)
    return session_id


def server_times(url: str, session_id: str, runs: int, invocation_id: int) -> tuple[list[float], list[float], int]:
    """(page loads, opens of one invocation's 20 KB body, bytes of the page) over HTTP; every run counted."""
    times, opens, size = [], [], 0
    with httpx.Client(base_url=url, timeout=60) as client:
        for _ in range(runs):
            started = time.perf_counter()
            shell = client.get(f"/sessions/{session_id}")
            fragment = client.get(f"/fragments/sessions/{session_id}")
            times.append((time.perf_counter() - started) * 1000)
            assert shell.status_code == 200 and fragment.status_code == 200, fragment.text[:300]
            size = len(shell.content) + len(fragment.content)
            started = time.perf_counter()
            body = client.get(f"/fragments/sessions/{session_id}/invocations/{invocation_id}")
            opens.append((time.perf_counter() - started) * 1000)
            assert body.status_code == 200 and len(body.content) > 1000
    return times, opens, size


# When the shell's response ended, DOMContentLoaded, when the data fragment (if any) arrived: ms from time origin.
MILESTONES = """(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const data = performance.getEntriesByType('resource').filter((r) => r.name.includes('/fragments/'));
  return [nav.responseEnd, nav.domContentLoadedEventEnd, data.length ? data[0].responseEnd : null];
})()"""


def browser_times(url: str, paths: dict[str, str], runs: int, profile: Path) -> dict[str, list[list[float]]] | None:
    """Per page, one row per load: [loaded, shell response end, DOMContentLoaded, data arrived] in ms."""
    from tests.serve.cdp import CHROMIUM, Browser

    if CHROMIUM is None:
        return None
    loads: dict[str, list[list[float]]] = {}
    with Browser(profile) as browser:
        # The browser's own first use of its network stack and disk cache (a fresh profile): no page, asset,
        # template or store read of the workbench is involved, and a user's running browser has done it already.
        browser.goto(f"{url}/healthz")
        for page, path in paths.items():
            browser.send("Network.clearBrowserCache")  # this page's first load fetches its files anew
            rows = loads[page] = []
            for _ in range(runs):
                browser.goto(f"{url}{path}")
                loaded = float(browser.wait_for("document.body.dataset.loadedMs", 60))
                rows.append([loaded, *browser.js(MILESTONES)])
    return loads


def report_browser(loads: dict[str, list[list[float]]]) -> None:
    for page, rows in loads.items():
        times = [row[0] for row in rows]
        middle = sorted(rows, key=lambda row: row[0])[len(rows) // 2]
        data = f", data {middle[3]:.0f}" if middle[3] is not None else ""
        slowest = ", ".join(f"{t:.0f}" for t in sorted(times)[-3:])
        print(f"  {page:9} first (cold) {times[0]:4.0f} ms · p50 {statistics.median(times):4.0f} ms · "
              f"max {max(times):4.0f} ms  over {len(times)} loads (slowest {slowest}; "
              f"at p50: shell {middle[1]:.0f}, DOMContentLoaded {middle[2]:.0f}{data})")
    worst = max(max(row[0] for row in rows) for rows in loads.values())
    print(f"  every page, every load: max {worst:.0f} ms  (target < 300 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--invocations", type=int, default=50)
    parser.add_argument("--output-kb", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="evigate-workbench-bench-") as tmp:
        database = Path(tmp) / "audit.duckdb"
        with AuditStore(database) as store:
            session_id = build_session(store, args.invocations, args.output_kb * 1000)
        paths = {"session": f"/sessions/{session_id}", "sessions": "/sessions", "ask": "/", "verify": "/verify"}
        pool = DiagnosisPool(lambda: DiagnosisProgram.from_settings(database=database), workers=1, queue_size=1)
        try:
            with ThreadedServer(create_app(pool, ServeOptions()), port=free_port()) as server:
                browser = None if args.no_browser else browser_times(server.url, paths, args.runs,
                                                                     Path(tmp) / "chromium")
                first_call = pool.store.invocation_records(session_id, with_output=False)[0]["id"]
                server_ms, open_ms, size = server_times(server.url, session_id, args.runs, first_call)
        finally:
            pool.close()
    print(f"workbench: session of {args.invocations} invocations x {args.output_kb} KB, {args.invocations} claims "
          f"with spans; session page {size / 1e6:.2f} MB of HTML; {args.runs} loads per page, every one counted")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average (1 min) "
          f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    if browser is None:
        print("browser: skipped (no chromium, or --no-browser)")
    else:
        print("browser (navigation start -> content in the page and the next frame, headless Chromium):")
        report_browser(browser)
    print(f"server  (shell + fragment over HTTP): p50 {statistics.median(server_ms):.0f} ms, "
          f"max {max(server_ms):.0f} ms")
    print(f"opening one invocation (its {args.output_kb} KB body over HTTP): p50 {statistics.median(open_ms):.0f} ms, "
          f"max {max(open_ms):.0f} ms")


if __name__ == "__main__":
    main()
