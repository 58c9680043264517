"""A file-only domain unlike the demo, end to end with scripted agents: no demo table, text or entity anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb

from evigate.demo import ERROR_CODES, SERVICES
from evigate.domain import load_domain
from evigate.modules.program import DiagnosisProgram
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedVerifier, claim, v2

QUERY = "Why did order 1001 fail at checkout around 14:03 with DB_POOL_TIMEOUT?"
DEMO_MARKERS = [*SERVICES, *ERROR_CODES, "world_", "2026-11-28", "pay-gateway", "订单 123"]


def cite_the_logs(results, _round: int) -> str:
    logs = next(r for r in results if r.tool_name == "search_logs" and r.success)
    line = next(line for line in logs.output.splitlines() if "DB_POOL_TIMEOUT" in line)
    return v2(claim("claim-1", logs, text=line, excerpt=line))


def test_the_built_in_planner_plans_with_the_domains_skills_and_vocabulary(starter: Path) -> None:
    domain = load_domain(str(starter))
    entities = domain.extract_entities(QUERY)
    assert entities["order_ids"] == [1001] and entities["error_codes"] == ["DB_POOL_TIMEOUT"]
    assert entities["times"] == ["2026-03-02 14:03"]  # the domain's clock, not the demo world's day
    assert domain.extract_entities("checkout 挂了 cart 也慢")["services"] == ["checkout-api", "cart-service"]
    program = DiagnosisProgram.from_settings(database=starter / "audit.duckdb", domain=starter)
    plan = program.fallback_planner.fallback(QUERY)
    assert plan.skill == "checkout-failure"
    assert {"tool": "search_logs", "args": {"business_id": "1001"}} in [
        {"tool": step.tool, "args": step.args} for step in plan.steps]
    assert program.registry.names() == ["search_logs", "lookup_knowledge", "get_current_datetime"]
    vocabulary = program.gatekeeper.vocabulary  # the Gatekeeper's entity rules get the domain's names
    assert vocabulary is not None and "checkout-api" in vocabulary.services
    assert "DB_POOL_TIMEOUT" in vocabulary.error_codes and "latency_p99" in vocabulary.identifiers
    program.store.close()


def test_a_file_only_domain_answers_with_no_trace_of_the_demo(starter: Path, tmp_path: Path) -> None:
    database = tmp_path / "acme-audit.duckdb"
    from tests.modules.scripted import ScriptedPlanner

    planner = ScriptedPlanner([{"tool": "search_logs", "args": {"business_id": "1001"}},
                               {"tool": "lookup_knowledge", "args": {"query": "DB_POOL_TIMEOUT"}}])
    program = DiagnosisProgram.from_settings(
        database=database, domain=starter, locale="en", planner=planner, executor=ScriptedExecutor(cite_the_logs),
        verifier=ScriptedVerifier({"claim-1": "direct_observation"}), composer=ScriptedComposer(),
    )
    result = program(query=QUERY)
    assert result.verdict in ("PASS", "LOW_CONFID") and "DB_POOL_TIMEOUT" in result.answer
    invocations = program.store.invocations(result.session_id)
    assert [inv.tool_name for inv in invocations] == ["search_logs", "lookup_knowledge"]
    assert all(inv.success for inv in invocations)
    program.store.close()

    with duckdb.connect(str(database), read_only=True) as connection:
        tables = {row[0] for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert not {t for t in tables if t.startswith("world_")}  # the demo world is built only when selected

    env = {**os.environ, "EVIGATE_DATABASE": str(database)}
    shown = subprocess.run([sys.executable, "-m", "evigate.cli", "show", result.session_id, "--json"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0, shown.stderr
    session = json.loads(shown.stdout)
    assert [inv["tool_name"] for inv in session["tool_invocations"]] == ["search_logs", "lookup_knowledge"]
    everything = shown.stdout
    leaked = [marker for marker in DEMO_MARKERS if marker in everything]
    assert not leaked, leaked
