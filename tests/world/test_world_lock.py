"""Issue 22, "the demo world holds the audit file's lock": once a question's answer is out, the process holds no
connection to the audit file the demo world lives in, while the program object lives on: another process opens
it read-only and read-write at the first try, and so does a read-only connection of this very process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

from evigate.modules.program import DiagnosisProgram
from evigate.store import AuditStore
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier, claim, v2

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
# One attempt each, no retry: DuckDB refuses at once ("Conflicting lock is held") while this process holds the file.
OPEN_ONCE = """
import sys, duckdb
for read_only in (True, False):
    with duckdb.connect(sys.argv[1], read_only=read_only) as connection:
        connection.execute("SELECT count(*) FROM world_orders").fetchone()
print("opened")
"""


def _program(world: Path) -> DiagnosisProgram:
    return DiagnosisProgram.from_settings(
        database=world, planner=ScriptedPlanner(),
        executor=ScriptedExecutor(lambda results, _round: v2(claim("claim-1", results[0]))),
        verifier=ScriptedVerifier({"claim-1": "supported"}), composer=ScriptedComposer(),
    )


def test_after_an_answer_other_processes_and_read_only_connections_open_the_world_file(private_world: Path) -> None:
    program = _program(private_world)
    for _ in range(2):  # the second question reopens the file, and lets go of it again
        result = program(query=QUERY)
        assert result.verdict == "PASS"
        with duckdb.connect(str(private_world), read_only=True) as connection:  # same process, other configuration
            assert connection.execute("SELECT count(*) FROM world_orders").fetchone()[0] > 0
        done = subprocess.run([sys.executable, "-c", OPEN_ONCE, str(private_world)], capture_output=True, text=True,
                              timeout=120)
        assert done.stdout.strip() == "opened", done.stderr[-800:]
    sessions = AuditStore(private_world, read_only=True).sessions()
    assert [row["status"] for row in sessions if row["query"] == QUERY] == ["finished", "finished"]
    assert program.store is not None  # the program lives on, and can answer again
