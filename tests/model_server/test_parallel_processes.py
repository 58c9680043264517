"""Several `evigate ask` processes at once against one model server: each session records only its own exchange.

The server (a real HTTP server on 127.0.0.1) answers every request with a marker taken from that request's own
prompt, so an answer delivered to the wrong process, or recorded under the wrong session, shows up as a foreign
marker. Each process has its own audit file: one DuckDB file takes one writing process at a time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evigate.store import AuditStore
from tests.llm.chat_server import ChatServer
from tests.model_server.cli_env import attempts, server_env

pytestmark = pytest.mark.model_server

ORDERS = ("123", "456", "789")


def echo_order(body: dict[str, Any]) -> str:
    prompt = json.dumps(body.get("messages", []), ensure_ascii=False)
    found = re.findall(r"订单 (\d{3}) ", prompt)
    return json.dumps({"marker": f"answer-for-order-{found[-1] if found else 'none'}"})


def test_parallel_processes_against_one_server_keep_their_sessions_apart(world_template: Path, tmp_path: Path) -> None:
    with ChatServer(content=echo_order) as server:
        running = {}
        for order_id in ORDERS:
            database = tmp_path / order_id / "evigate.duckdb"
            database.parent.mkdir()
            shutil.copy(world_template, database)
            env = server_env(server.api_base, database, tmp_path / "net.log")
            command = [sys.executable, "-m", "evigate.cli", "ask", f"订单 {order_id} 支付失败，是什么原因？", "--json"]
            running[order_id] = (database, subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                                            stderr=subprocess.PIPE, text=True))
        finished = {order_id: (database, *process.communicate(timeout=600), process.returncode)
                    for order_id, (database, process) in running.items()}
    assert len({json.dumps(r["body"]["messages"]) for r in server.requests}) >= len(ORDERS)
    for order_id, (database, stdout, stderr, code) in finished.items():
        assert code == 0 and "Traceback" not in stderr, stderr
        session_id = json.loads(stdout)["session_id"]
        with AuditStore(database, read_only=True) as store:
            outputs = " ".join(step["model_output"] for step in store.steps(session_id))
            invocations = store.invocations(session_id)
        markers = set(re.findall(r"answer-for-order-(\d{3})", outputs))
        assert markers == {order_id}, (order_id, markers)
        assert all(str(inv.input.get("order_id", order_id)) == order_id for inv in invocations), invocations
    assert attempts(tmp_path / "net.log") == []
