"""End to end on a domain unlike the demo (issue 11): Northwind Freight on real Prometheus, PostgreSQL 15, JSONL
log files, Markdown runbooks and a third-party MCP server. `evigate domain check` passes, a scripted-agent program
answers from it, `evigate show` lists an invocation against every source, and no demo-world table, text or entity
appears anywhere in the session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest
from typer.testing import CliRunner

from evigate.demo import ERROR_CODES, SERVICES
from evigate.domain import load_domain
from evigate.modules.program import DiagnosisProgram
from evigate.signatures import ComposerInput, ComposerOutput
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier, claim, v2
from tests.servers import postgres_server, prometheus_server

pytestmark = pytest.mark.servers

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "domains" / "northwind"
READER_PASSWORD = "northwind-reader-secret"
QUERY = "Why is shipment SHP-204311 still not dispatched? It was stuck around 09:15."
DEMO_MARKERS = [*SERVICES, *ERROR_CODES, "world_", "2026-11-28", "pay-gateway", "订单", "order_id"]
SOURCE_TOOLS = {"shipment_status": "shipments_db", "search_logs": "dispatch_logs", "dispatch_latency": "metrics",
                "lookup_runbook": "runbooks", "promql_instant": "prometheus_mcp"}
PLAN = [
    {"tool": "shipment_status", "args": {"shipment_id": "SHP-204311"}},
    {"tool": "search_logs", "args": {"business_id": "SHP-204311", "level": "ERROR"}},
    {"tool": "dispatch_latency", "args": {"service": "dispatch-api", "start": "2026-04-14 09:00",
                                          "end": "2026-04-14 09:40"}},
    {"tool": "lookup_runbook", "args": {"query": "MANIFEST_LOCK_WAIT"}},
    {"tool": "promql_instant", "args": {"query": 'dispatch_request_duration_p99_seconds{service="dispatch-api"}',
                                        "time": "2026-04-14T09:20:00Z"}},
]


@pytest.fixture(scope="module")
def northwind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The fixture domain copied next to the servers it names, with their addresses filled in."""
    work = tmp_path_factory.mktemp("northwind")
    openmetrics = (FIXTURE / "data" / "series.om").read_text(encoding="utf-8")
    with prometheus_server(openmetrics, work / "prometheus") as url, postgres_server() as postgres:
        with psycopg.connect(postgres.dsn, autocommit=True) as admin:
            admin.execute("CREATE DATABASE northwind")
            admin.execute(f"CREATE ROLE northwind_reader LOGIN PASSWORD '{READER_PASSWORD}'")
        dsn = postgres.dsn.replace("dbname=postgres", "dbname=northwind")
        with psycopg.connect(dsn, autocommit=True) as owner:
            owner.execute((FIXTURE / "data" / "seed.sql").read_text(encoding="utf-8"))
        directory = work / "northwind"
        shutil.copytree(FIXTURE, directory)
        config = directory / "domain.yaml"
        config.write_text(config.read_text(encoding="utf-8").replace("@PROMETHEUS_URL@", url)
                          .replace("@PG_PORT@", str(postgres.port)), encoding="utf-8")
        previous = os.environ.get("NORTHWIND_PG_PASSWORD")
        os.environ["NORTHWIND_PG_PASSWORD"] = READER_PASSWORD
        try:
            yield directory
        finally:
            if previous is None:
                os.environ.pop("NORTHWIND_PG_PASSWORD", None)
            else:
                os.environ["NORTHWIND_PG_PASSWORD"] = previous


def test_domain_check_passes_for_every_source(northwind: Path) -> None:
    from evigate.cli.app import _register_commands, app

    _register_commands()
    result = CliRunner().invoke(app, ["domain", "check", str(northwind)], terminal_width=200)
    assert result.exit_code == 0, result.output
    for source in SOURCE_TOOLS.values():
        row = next(line for line in result.output.splitlines() if f" {source} " in line)
        assert " yes " in row, row
    assert "PostgreSQL" in result.output and "ok:" in result.output


def cite_the_evidence(results, _round: int) -> str:
    by_tool = {result.tool_name: result for result in results}
    assert all(result.success for result in results), [result.error for result in results if not result.success]
    status = by_tool["shipment_status"].output.splitlines()[1]
    lock = next(line for line in by_tool["search_logs"].output.splitlines() if "MANIFEST_LOCK_WAIT" in line)
    latency = by_tool["dispatch_latency"].output.splitlines()[1]
    return v2(claim("claim-1", by_tool["shipment_status"], text=status, excerpt=status),
              claim("claim-2", by_tool["search_logs"], text=lock, excerpt=lock),
              claim("claim-3", by_tool["dispatch_latency"], text=latency, excerpt=latency))


def english_answer(composer_input: ComposerInput) -> ComposerOutput:
    """A faithful Composer in English: only the allowed claims, then the gaps."""
    facts = "; ".join(claim.claim_text for claim in composer_input.allowed_claims)
    parts = [f"Confirmed: {facts}." if facts else "Nothing could be confirmed."]
    parts.extend(f"Gap: {gap}" for gap in composer_input.missing_info[:2])
    return ComposerOutput(answer_summary=parts[0], recommended_actions=composer_input.recommended_actions,
                          user_facing_answer=" ".join(parts))


def test_a_scripted_program_answers_from_every_source_with_no_trace_of_the_demo(northwind: Path,
                                                                               tmp_path: Path) -> None:
    domain = load_domain(str(northwind))
    entities = domain.extract_entities(QUERY)
    assert entities["shipment_ids"] == ["SHP-204311"]
    database = tmp_path / "northwind-audit.duckdb"
    program = DiagnosisProgram.from_settings(
        database=database, domain=domain, locale="en", planner=ScriptedPlanner(PLAN),
        executor=ScriptedExecutor(cite_the_evidence),
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation",
                                   "claim-3": "direct_observation"}),
        composer=ScriptedComposer(english_answer),
    )
    assert set(SOURCE_TOOLS) <= set(program.registry.names())
    result = program(query=QUERY)
    assert result.verdict == "PASS", result.answer
    assert "MANIFEST_LOCK_WAIT" in result.answer and "DISPATCH_PENDING" in result.answer
    invocations = program.store.invocations(result.session_id)
    assert [inv.tool_name for inv in invocations] == [step["tool"] for step in PLAN]
    assert all(inv.success for inv in invocations), [inv.error for inv in invocations]
    program.store.close()

    with duckdb.connect(str(database), read_only=True) as connection:
        tables = {row[0] for row in connection.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert not {table for table in tables if table.startswith("world_")}

    env = {**os.environ, "EVIGATE_DATABASE": str(database)}
    shown = subprocess.run([sys.executable, "-m", "evigate.cli", "show", result.session_id, "--json"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0, shown.stderr
    session = json.loads(shown.stdout)
    assert {inv["tool_name"]: inv["retrieval_details"]["source"] for inv in session["tool_invocations"]} == SOURCE_TOOLS
    assert READER_PASSWORD not in shown.stdout
    leaked = [marker for marker in DEMO_MARKERS if marker in shown.stdout]
    assert not leaked, leaked


@pytest.mark.local_model
def test_evigate_ask_on_the_embedded_model_answers_from_the_domain(northwind: Path, tmp_path: Path) -> None:
    """The real pipeline (embedded Qwen2.5-Coder-0.5B through llama.cpp) plans and calls Northwind's tools."""
    database = tmp_path / "ask-audit.duckdb"
    env = {**os.environ, "EVIGATE_DATABASE": str(database), "EVIGATE_TIMEOUTS__AGENT_SECONDS": "420",
           "EVIGATE_COMPILED_PROGRAM": "false"}  # the built-in prompts
    evigate = [sys.executable, "-m", "evigate.cli"]
    ask = subprocess.run([*evigate, "ask", "--domain", str(northwind), QUERY, "--json"], capture_output=True,
                         text=True, env=env, timeout=2400, cwd=tmp_path)
    assert ask.returncode == 0, ask.stderr[-3000:]
    result = json.loads(ask.stdout)
    answer = result["answer"]
    assert answer.strip() and '{"' not in answer and "```" not in answer
    shown = subprocess.run([*evigate, "show", result["session_id"], "--json"], capture_output=True, text=True,
                           env=env, timeout=120, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr[-3000:]
    session = json.loads(shown.stdout)
    called = {inv["tool_name"] for inv in session["tool_invocations"]}
    assert called and called <= {*SOURCE_TOOLS, "get_current_datetime"}, called
    assert READER_PASSWORD not in shown.stdout
    leaked = [marker for marker in DEMO_MARKERS if marker in shown.stdout]
    assert not leaked, leaked
