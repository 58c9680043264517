"""SQL connector: declared read-only queries on a real PostgreSQL 15 and on DuckDB over Parquet/CSV files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from evigate.errors import ConfigError, ToolError
from evigate.tools.connectors import CONNECTORS, parse_sources, parse_tools
from tests.servers import Postgres, postgres_server

SEED = """
CREATE TABLE invoices (id int PRIMARY KEY, customer text NOT NULL, status text NOT NULL, amount numeric(10,2),
                       updated_at timestamptz NOT NULL);
INSERT INTO invoices SELECT n, 'cust-' || (n % 7), CASE WHEN n % 10 = 0 THEN 'FAILED' ELSE 'PAID' END, n * 1.5,
       timestamptz '2026-03-01 10:00:00+00' + n * interval '1 minute' FROM generate_series(1, 300) n;
CREATE TABLE counters (name text PRIMARY KEY, n int NOT NULL);
INSERT INTO counters VALUES ('calls', 0);
CREATE FUNCTION bump() RETURNS int LANGUAGE sql AS 'UPDATE counters SET n = n + 1 RETURNING n';
"""

INVOICE = {"name": "invoice_status", "description": "Status of one invoice.", "source": "billing",
           "sql": "SELECT id, customer, status, amount, updated_at FROM invoices WHERE id = :invoice_id",
           "params": {"invoice_id": {"type": "integer", "description": "invoice number"}}}
FAILED = {"name": "failed_invoices", "description": "Failed invoices of a customer.", "source": "billing",
          "sql": "SELECT id, status FROM invoices WHERE customer = :customer AND status = 'FAILED' ORDER BY id",
          "params": {"customer": {"type": "string"}}}


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    with postgres_server() as server:
        with psycopg.connect(server.dsn, autocommit=True) as connection:
            connection.execute(SEED)
        yield server


def _pg_sources(server: Postgres, **extra) -> dict:
    return {"billing": {"kind": "sql", "engine": "postgresql", "host": server.host, "port": server.port,
                        "dbname": server.dbname, "user": server.user, "password_env": "ACME_PG_PASSWORD", **extra}}


@pytest.mark.servers
def test_postgres_query_row_cap_and_no_secret_in_the_audit(postgres: Postgres, make_toolbox, audit, tmp_path,
                                                           monkeypatch) -> None:
    monkeypatch.setenv("ACME_PG_PASSWORD", postgres.password)
    everything = {"name": "all_invoices", "description": "All invoices.", "source": "billing",
                  "sql": "SELECT id FROM invoices ORDER BY id"}
    toolbox = make_toolbox(_pg_sources(postgres, max_rows=5), [INVOICE, FAILED, everything], tmp_path)
    one = toolbox.call("invoice_status", invoice_id=30)
    assert one.success, one.error
    assert one.output.splitlines() == [
        "invoice_status (invoice_id=30): 1 rows",
        "id=30; customer=cust-2; status=FAILED; amount=45.00; updated_at=2026-03-01T10:30:00+00:00"]
    failed = toolbox.call("failed_invoices", customer="cust-3")
    assert failed.output.splitlines()[1:] == ["id=10; status=FAILED", "id=80; status=FAILED", "id=150; status=FAILED",
                                              "id=220; status=FAILED", "id=290; status=FAILED"]
    capped = toolbox.call("all_invoices")
    assert capped.output.startswith("all_invoices (no parameters): 5 rows (capped at 5; more rows exist)")
    assert capped.retrieval_details["truncated"] is True
    injected = toolbox.call("failed_invoices", customer="x' OR '1'='1")
    assert injected.success and injected.output.endswith("no rows")
    with audit.cursor() as cursor:
        stored = json.dumps(cursor.execute("SELECT * FROM tool_invocation").fetchall(), default=str)
    assert postgres.password not in stored


@pytest.mark.servers
def test_read_only_transaction_timeout_and_missing_credentials(postgres: Postgres, make_toolbox, tmp_path,
                                                               monkeypatch) -> None:
    monkeypatch.setenv("ACME_PG_PASSWORD", postgres.password)
    sneaky = {"name": "sneaky", "description": "Looks like a read.", "source": "billing", "sql": "SELECT bump()"}
    slow = {"name": "slow", "description": "Sleeps.", "source": "billing", "sql": "SELECT pg_sleep(:seconds)",
            "params": {"seconds": {"type": "number"}}}
    toolbox = make_toolbox(_pg_sources(postgres, timeout_s=1), [sneaky, slow], tmp_path)
    refused = toolbox.call("sneaky")
    assert not refused.success and "read-only transaction" in refused.error
    with psycopg.connect(postgres.dsn) as connection:
        assert connection.execute("SELECT n FROM counters").fetchone() == (0,)
    timed_out = toolbox.call("slow", seconds=5)
    assert not timed_out.success and "statement timeout of 1s" in timed_out.error
    monkeypatch.delenv("ACME_PG_PASSWORD")
    missing = toolbox.call("slow", seconds=0)
    assert not missing.success and "environment variable ACME_PG_PASSWORD is not set" in missing.error
    monkeypatch.setenv("ACME_PG_PASSWORD", "wrong")
    wrong = toolbox.call("slow", seconds=0)
    assert not wrong.success and "password authentication failed" in wrong.error and "wrong" not in wrong.error


@pytest.mark.servers
def test_postgres_check(postgres: Postgres, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ACME_PG_PASSWORD", postgres.password)
    [source] = parse_sources(_pg_sources(postgres)).values()
    check = CONNECTORS["sql"].check("billing", source, base_dir=tmp_path)
    assert check.reachable and check.seen == 2 and check.detail.startswith("PostgreSQL 15")
    monkeypatch.setenv("ACME_PG_PASSWORD", "wrong")
    assert not CONNECTORS["sql"].check("billing", source, base_dir=tmp_path).reachable


@pytest.mark.parametrize("sql", [
    "DELETE FROM invoices",
    "WITH gone AS (DELETE FROM invoices RETURNING id) SELECT * FROM gone",
    "SELECT * INTO copy FROM invoices",
    "SELECT 1; DROP TABLE invoices",
    "SELECT id FROM invoices FOR UPDATE",
    "COPY invoices TO '/tmp/x'",
    "ATTACH 'other.db'",
    "SELECT 'unterminated",
])
def test_writing_queries_are_refused_at_config_time(sql: str) -> None:
    sources = parse_sources({"billing": {"kind": "sql", "engine": "duckdb", "files": {"t": "t.csv"}}})
    with pytest.raises(ConfigError, match=r"tools\.q\.sql"):
        parse_tools([{"name": "q", "description": "d", "source": "billing", "sql": sql}], sources)


def test_reading_queries_pass_with_strings_casts_and_comments() -> None:
    sources = parse_sources({"billing": {"kind": "sql", "engine": "duckdb", "files": {"t": "t.csv"}}})
    sql = "SELECT 'DELETE; :not_a_param' AS s, x::int -- UPDATE\nFROM t WHERE a = :a; "
    [tool] = parse_tools([{"name": "q", "description": "d", "source": "billing", "sql": sql,
                           "params": {"a": {"type": "string"}}}], sources)
    assert tool.sql == sql
    with pytest.raises(ConfigError, match="declares no such argument"):
        parse_tools([{"name": "q", "description": "d", "source": "billing", "sql": "SELECT :b"}], sources)


@pytest.fixture()
def files_domain(tmp_path: Path) -> Path:
    with duckdb.connect() as connection:
        connection.execute(f"COPY (SELECT n AS id, 'svc-' || (n % 3) AS service, n * 10 AS ms FROM range(50) t(n)) "
                           f"TO '{tmp_path / 'calls.parquet'}' (FORMAT parquet)")
    (tmp_path / "owners.csv").write_text("service,team\nsvc-0,payments\nsvc-1,ledger\nsvc-2,search\n")
    return tmp_path


def test_duckdb_over_parquet_and_csv(files_domain: Path, make_toolbox) -> None:
    sources = {"files": {"kind": "sql", "engine": "duckdb", "files": {"calls": "calls.parquet", "owners": "owners.csv"},
                         "max_rows": 3}}
    tool = {"name": "slow_calls", "description": "Slowest calls of a team.", "source": "files",
            "sql": "SELECT c.id, c.ms, o.team FROM calls c JOIN owners o USING (service) "
                   "WHERE o.team = :team AND c.ms >= :min_ms ORDER BY c.ms DESC",
            "params": {"team": {"type": "string", "enum": ["payments", "ledger", "search"]},
                       "min_ms": {"type": "integer", "required": False, "default": 0}}}
    toolbox = make_toolbox(sources, [tool], files_domain)
    result = toolbox.call("slow_calls", team="ledger", min_ms=300)
    assert result.success, result.error
    assert result.output.splitlines() == [
        "slow_calls (team='ledger', min_ms=300): 3 rows (capped at 3; more rows exist)",
        "id=49; ms=490; team=ledger", "id=46; ms=460; team=ledger", "id=43; ms=430; team=ledger"]
    assert not toolbox.call("slow_calls", team="marketing").success
    [parsed] = parse_sources(sources).values()
    check = CONNECTORS["sql"].check("files", parsed, base_dir=files_domain)
    assert check.reachable and check.seen == 53


def test_duckdb_connection_itself_is_read_only(files_domain: Path) -> None:
    from evigate.tools.connectors.sql import DuckDBRunner

    [source] = parse_sources({"f": {"kind": "sql", "engine": "duckdb", "files": {"calls": "calls.parquet"}}}).values()
    runner = DuckDBRunner(source, files_domain)
    with pytest.raises(ToolError, match="read-only"):
        runner.run("CREATE TABLE stolen AS SELECT * FROM calls", {}, 10)
    missing = parse_sources({"f": {"kind": "sql", "engine": "duckdb", "files": {"calls": "nope.parquet"}}})
    with pytest.raises(ConfigError, match=r"sources\.f\.files\.calls"):
        CONNECTORS["sql"].build_tools("f", missing["f"], [], base_dir=files_domain)


def test_the_duckdb_catalog_folder_goes_with_its_runner(files_domain: Path) -> None:
    import gc

    from evigate.tools.connectors.sql import DuckDBRunner

    [source] = parse_sources({"f": {"kind": "sql", "engine": "duckdb", "files": {"calls": "calls.parquet"}}}).values()
    runner = DuckDBRunner(source, files_domain)
    runner.run("SELECT count(*) FROM calls", {}, 10)
    folder = runner.catalog().parent
    assert folder.is_dir()
    del runner
    gc.collect()
    assert not folder.exists()  # before the fix every process left an evigate-sql-* folder in the temp dir
