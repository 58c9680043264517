"""One evigate worker of the store tests: ``python -m tests.store.load_worker LOCATION WORKER SESSIONS [RELEASE]``.

Runs SESSIONS diagnoses with scripted agents (no model) against the audit store at LOCATION, one after the other,
and prints one JSON line per finished session: its id and the tag its query and tool arguments carry, so the
test can check that every invocation landed under the session that made it. With RELEASE (a file path), each
session's Executor waits after its tool calls until that file exists, as a slow model would keep a session open.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import dspy

from evigate.modules.program import DiagnosisProgram
from evigate.signatures import Plan, PlanStep, RetryContext
from tests.modules.scripted import (
    LOG_STEP,
    ORDER_STEP,
    ScriptedComposer,
    ScriptedExecutor,
    ScriptedVerifier,
    claim,
    v2,
)

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"


def query_for(tag: str) -> str:
    return f"{QUERY} [{tag}]"


def tag_of(query: str) -> str:
    return query.rsplit("[", 1)[1].rstrip("]")


class TaggedPlanner(dspy.Module):
    """Plans the order, its logs and a knowledge lookup that carries the session's tag in its arguments."""

    def forward(self, query: str, retry_context: RetryContext | None = None) -> dspy.Prediction:
        steps = [ORDER_STEP, LOG_STEP, {"tool": "lookup_knowledge", "args": {"query": f"ERR_TIMEOUT {tag_of(query)}"}}]
        return dspy.Prediction(plan=Plan(skill="scripted", steps=[PlanStep(**step) for step in steps]))


def one_claim(results: list[Any], _round: int) -> str:
    return v2(claim("claim-1", results[0]))


class WaitingExecutor(ScriptedExecutor):
    """Runs its tool calls, then waits (at most 300 s) until ``release`` exists before writing its answer."""

    def __init__(self, release: Path) -> None:
        super().__init__(one_claim)
        self.release = release

    def forward(self, query: str, plan: Plan, retry_context: RetryContext | None = None, toolbox: Any = None):
        results = [toolbox.call(step.tool, **step.args) for step in plan.steps]
        deadline = time.monotonic() + 300
        while not self.release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return dspy.Prediction(raw_output=one_claim(results, 1))


def main(location: str, worker: int, sessions: int, release: str | None = None) -> None:
    program = DiagnosisProgram.from_settings(
        database=location,
        planner=TaggedPlanner(),
        executor=WaitingExecutor(Path(release)) if release else ScriptedExecutor(one_claim),
        verifier=ScriptedVerifier({"claim-1": "supported"}),
        composer=ScriptedComposer(),
    )
    for number in range(sessions):
        tag = f"w{worker}-s{number}"
        result = program(query=query_for(tag))
        print(json.dumps({"session_id": result.session_id, "tag": tag, "verdict": result.verdict}), flush=True)
    program.store.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
