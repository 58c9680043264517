"""Benchmark: the question's anchors cost linear time in the number of entities the question names (issue 22 item 10).

A question naming n order ids ("order 100000 order 100001 …", up to 100,000 ids in 1.3 MB, far past the 4,000
characters `evigate ask`, the Python API and the HTTP API accept) is read by `question_anchors` and then by
`add_anchor_observations` against one session of 10 log outputs of 200 lines each. Before the fix the anchors were
de-duplicated pairwise (quadratic: 16,000 ids took 24 s of CPU here, 100,000 about 581 s) and every output was
scanned once per id.

Run:  python bench/anchors.py [--ids 1000 10000 100000]
Figures are this process's CPU seconds (time.process_time), printed with the machine's load average. Entity
extraction is cached (rules/text/entities.py), so it is timed once, first; "anchors" and "anchor step" are what the
question's entities cost beyond it.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time

from evigate.rules import Gatekeeper
from evigate.rules.text.entities import extract_entities
from evigate.rules.verdict.anchor_observations import add_anchor_observations, question_anchors
from evigate.signatures import ToolInvocation


def _session(ids: int, rng: random.Random) -> list[ToolInvocation]:
    lines = lambda: "\n".join(  # noqa: E731 - one output of 200 log lines naming random ids of the question
        f"2024-05-01 10:05:{j % 60:02d} ERROR [pay-gateway] order {100000 + rng.randrange(ids)} ERR_TIMEOUT after "
        "5300ms" for j in range(200))
    return [ToolInvocation(id=i + 1, session_id="s", tool_name="query_logs", input={"service": "pay-gateway"},
                           output_preview=lines(), success=True) for i in range(10)]


def measure(ids: int) -> tuple[int, float, float, float]:
    """(query characters, CPU s to extract its entities, to pick its anchors, for the whole anchor step)."""
    rng = random.Random(ids)
    query = "订单 " + " ".join(f"order {100000 + i}" for i in range(ids)) + " 支付失败，ERR_TIMEOUT 是什么原因？"
    session = Gatekeeper.default().session_index(_session(ids, rng), "s", None, query)
    start = time.process_time()
    extract_entities(query)
    extract = time.process_time() - start
    start = time.process_time()
    question_anchors(query)
    anchors = time.process_time() - start
    start = time.process_time()
    add_anchor_observations({"claims": []}, session, query=query)
    whole = time.process_time() - start
    return len(query), extract, anchors, whole


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=int, nargs="+", default=[1000, 10000, 100000])
    args = parser.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, Python {sys.version.split()[0]}, "
          f"load average {os.getloadavg()[0]:.2f}; CPU seconds of this process")
    print(f"{'ids':>7} | {'query chars':>11} | {'extract':>8} | {'anchors':>8} | {'anchor step':>11}")
    for ids in args.ids:
        chars, extract, anchors, whole = measure(ids)
        print(f"{ids:>7} | {chars:>11,} | {extract:>7.3f}s | {anchors:>7.3f}s | {whole:>10.3f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
