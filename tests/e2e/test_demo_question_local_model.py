"""One demo question on the real embedded model: the answer states a confirmed fact the world's truth bears out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evigate.demo.catalog import incident_by_id
from evigate.optimize.world_facts import confirmed_facts
from evigate.store import AuditStore

pytestmark = pytest.mark.local_model
QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"  # INC-20261128-05, the README question


def test_the_readme_question_states_a_correct_confirmed_fact(private_world: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "EVIGATE_DATABASE": str(private_world),
        "EVIGATE_TIMEOUTS__AGENT_SECONDS": "420",
        "EVIGATE_COMPILED_PROGRAM": "false",  # the built-in prompts
    }
    ask = subprocess.run([sys.executable, "-m", "evigate.cli", "ask", QUERY, "--json"], capture_output=True,
                         text=True, env=env, timeout=2400, cwd=tmp_path)
    assert ask.returncode == 0, ask.stderr[-3000:]
    result = json.loads(ask.stdout)
    store = AuditStore(private_world, read_only=True)
    correct, wrong = confirmed_facts(store, result["session_id"], result["answer"], incident_by_id("INC-20261128-05"))
    assert wrong == [], wrong
    assert correct, f"no correct confirmed fact in: {result['answer']}"
