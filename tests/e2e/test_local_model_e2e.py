"""End to end on the real embedded model: `evigate ask` then `evigate show`, llama.cpp on the CPU. Slow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evigate.store import AuditStore

pytestmark = pytest.mark.local_model
QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
EVIGATE = [sys.executable, "-m", "evigate.cli"]


def test_ask_on_the_local_model_answers_and_show_prints_the_whole_chain(private_world: Path, tmp_path: Path) -> None:
    database = private_world
    env = {
        **os.environ,
        "EVIGATE_DATABASE": str(database),
        "EVIGATE_TIMEOUTS__AGENT_SECONDS": "420",
        "EVIGATE_COMPILED_PROGRAM": "false",  # the built-in prompts
        "EVIGATE_PREFIX_CACHE": str(tmp_path / "prompt-states"),  # cold: nothing left over from other runs
    }
    ask = subprocess.run(
        [*EVIGATE, "ask", QUERY, "--json"], capture_output=True, text=True, env=env, timeout=2400, cwd=tmp_path
    )
    assert ask.returncode == 0, ask.stderr[-3000:]
    result = json.loads(ask.stdout)
    assert result["output_type"] in ("NORMAL", "LOW_CONFID_WITH_DISCLAIMER", "DEGRADED")
    answer = result["answer"]
    assert answer.strip() and '{"' not in answer and "```" not in answer

    show = subprocess.run(
        [*EVIGATE, "show", result["session_id"]], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path
    )
    assert show.returncode == 0, show.stderr[-3000:]
    for heading in ("final answer", "composer input", "gatekeeper", "tool invocations", "agent steps"):
        assert heading in show.stdout

    assert list((tmp_path / "prompt-states").rglob("*.kv")), "system prompts were not kept for the next process"
    store = AuditStore(database, read_only=True)
    steps = store.steps(result["session_id"])
    assert {"planner", "executor"} <= {step["agent"] for step in steps}
    # A small model may still fail a call (e.g. a truncated Verifier JSON): that must be recorded, never hidden.
    assert all(step["status"] == "ok" or step["error"] for step in steps)
    executor = next(step for step in steps if step["agent"] == "executor")
    assert executor["status"] == "ok" and executor["completion_tokens"] > 0 and executor["model_output"]
    assert store.invocations(result["session_id"]), "the plan ran no tool"
    evaluation = store.session(result["session_id"])["self_evaluation"]["verifier_evaluation"]
    assert evaluation["verdict"] == result["verdict"]
    if result["verdict"] == "PASS":
        assert evaluation["gatekeeper_result"]["status"] != "fail"
