"""A long `evigate ask` does not lock its DuckDB file: other processes read and write it meanwhile (issue 12)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from evigate.store import AuditStore
from tests.store.load_worker import query_for

REPO = Path(__file__).resolve().parents[2]


def wait_for_running_session(path: Path, holder: subprocess.Popen, timeout_s: float = 120) -> str:
    """The id of the holder's session once its tool calls are recorded (it then sleeps inside its Executor)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert holder.poll() is None, holder.stderr.read() if holder.stderr else "the session holder died"
        with AuditStore(path, read_only=True) as reader:
            for row in reader.sessions():
                if row["status"] == "running" and len(reader.invocations(row["session_id"])) >= 3:
                    return row["session_id"]
        time.sleep(0.2)
    raise AssertionError("the long session never started")


def test_show_and_another_session_work_while_a_long_session_runs(private_world: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    release = tmp_path / "release"
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.store.load_worker", str(private_world), "0", "1", str(release)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # its Executor waits after its tool calls until `release` exists, as a slow model would
    try:
        running = wait_for_running_session(private_world, holder)
        shown = subprocess.run(
            [sys.executable, "-m", "evigate.cli", "show", running, "--json", "--database", str(private_world)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        )
        assert shown.returncode == 0, shown.stdout + shown.stderr
        assert json.loads(shown.stdout)["session"]["status"] == "running"
        with AuditStore(private_world, lock_wait_seconds=5) as writer:  # a second ask's writes
            other = writer.start_session("另一个问题")
            writer.record_step(other, 1, "planner", thought="t", model_output="m")
            writer.finish_session(other, output_type=None, verdict=None, answer="", rounds=1, groundedness_score=None)
        assert holder.poll() is None
        release.touch()
        out, err = holder.communicate(timeout=300)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=30)
    assert holder.returncode == 0, err[-3000:]
    [report] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    with AuditStore(private_world, read_only=True) as reader:
        finished = reader.session(report["session_id"])
        assert (finished["session_id"], finished["status"]) == (running, "finished")
        assert finished["query"] == query_for("w0-s0")
        assert reader.session(other)["status"] == "finished"
