"""A model server that is down, slow or answers garbage: a recorded, degraded answer and a clear message, no traceback.

Each case runs `evigate ask` as a subprocess against a real HTTP server on 127.0.0.1 (tests/llm/chat_server.py)
or against a port nobody listens on, with every non-loopback connection refused and logged — so these tests also
show that ask, show and eval never reach for the network (litellm's cost map, DSPy's model metadata).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evigate.store import AuditStore
from tests.llm.chat_server import ChatServer
from tests.model_server.cli_env import QUESTION, attempts, evigate, server_env
from tests.servers import free_port

EVIGATE = [sys.executable, "-m", "evigate.cli"]
# CLI subprocesses (about 10 s each on 2 busy cores): the slow stage of scripts/test.sh runs them.
pytestmark = pytest.mark.model_server


def ask_degraded(api_base: str, database: Path, net_log: Path, **extra: str) -> dict:
    env = server_env(api_base, database, net_log, **extra)
    asked = evigate("ask", QUESTION, "--json", env=env)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "Traceback" not in asked.stdout + asked.stderr
    result = json.loads(asked.stdout)
    # No model answered: never a confirmed answer (an empty Executor output reads as missing evidence, not forgery).
    assert result["output_type"] != "NORMAL" and result["verdict"] != "PASS", result
    assert "{" not in result["answer"]  # the rendered template, never raw JSON
    assert attempts(net_log) == []
    return result


def agent_errors(database: Path, session_id: str) -> dict[str, str]:
    with AuditStore(database, read_only=True) as store:
        assert store.session(session_id)["status"] == "finished"
        return {step["agent"]: step["error"] or "" for step in store.steps(session_id) if step["status"] == "error"}


def test_a_server_that_is_down(private_world: Path, tmp_path: Path) -> None:
    api_base = f"http://127.0.0.1:{free_port()}/v1"
    result = ask_degraded(api_base, private_world, tmp_path / "net.log")
    errors = agent_errors(private_world, result["session_id"])
    assert "executor" in errors
    assert "connect" in errors["executor"].lower()
    # Without --json the user reads why: one line per agent that could not reach its model.
    plain = evigate("ask", QUESTION, env=server_env(api_base, private_world, tmp_path / "net.log"))
    assert plain.returncode == 0 and "Traceback" not in plain.stdout + plain.stderr
    assert any(line.startswith("degraded:") and "executor" in line for line in plain.stdout.splitlines())


def test_a_server_that_is_too_slow(private_world: Path, tmp_path: Path) -> None:
    with ChatServer("slow", delay=20) as server:
        result = ask_degraded(server.api_base, private_world, tmp_path / "net.log", EVIGATE_TIMEOUTS__AGENT_SECONDS="2")
    errors = agent_errors(private_world, result["session_id"])
    assert "timed out" in errors["executor"].lower() or "timeout" in errors["executor"].lower()


@pytest.mark.parametrize("mode", ["garbage", "error"])
def test_a_server_answering_garbage_or_errors(private_world: Path, tmp_path: Path, mode: str) -> None:
    with ChatServer(mode) as server:
        result = ask_degraded(server.api_base, private_world, tmp_path / "net.log")
        assert server.requests  # it really was asked
    assert "executor" in agent_errors(private_world, result["session_id"])


def test_ask_show_and_eval_never_touch_the_network(private_world: Path, tmp_path: Path) -> None:
    net_log = tmp_path / "net.log"
    with ChatServer(content='{"reasoning": "n/a"}') as server:
        result = ask_degraded(server.api_base, private_world, net_log)
        env = server_env(server.api_base, private_world, net_log)
        shown = evigate("show", result["session_id"], "--json", env=env)
        evaluated = evigate("eval", "--agent", "verifier", "--limit", "1", "--sets", "demo_world", env=env)
    assert shown.returncode == 0 and json.loads(shown.stdout)["session"]["session_id"] == result["session_id"]
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert "Traceback" not in evaluated.stdout + evaluated.stderr
    assert server.requests, "eval did not call the configured server"
    assert attempts(net_log) == [], attempts(net_log)
    assert "metadata refresh failed" not in (evaluated.stdout + evaluated.stderr).lower()


def test_ctrl_c_during_a_model_call_leaves_the_session_interrupted(private_world: Path, tmp_path: Path) -> None:
    with ChatServer("slow", delay=60) as server:
        env = server_env(server.api_base, private_world, tmp_path / "net.log")
        process = subprocess.Popen([*EVIGATE, "ask", QUESTION], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not server.requests and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert server.requests, "ask never reached the model server"
        process.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal sends
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in stderr, stderr
    assert "interrupted" in stdout
    with AuditStore(private_world, read_only=True) as store:
        (latest,) = store.sessions(limit=1)
        record = store.session(latest["session_id"])
    assert record["query"] == QUESTION
    assert record["status"] == "interrupted" and "KeyboardInterrupt" in record["error"]
