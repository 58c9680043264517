"""Issue 22 finding 12 (files): a source reads only files under the domain directory unless it opts out with
`allow_outside_domain: true`; a SQL statement's own file readers are held to the same bound; FIFOs and devices are
skipped and named; and no DuckDB connection a connector opens installs or autoloads an extension."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evigate.errors import ConfigError, ToolError
from evigate.tools.connectors import CONNECTORS, parse_sources, parse_tools
from evigate.tools.connectors.logfiles import LogReader
from evigate.tools.connectors.sql import DuckDBRunner
from evigate.tools.connectors.sqlguard import UnsafeSQL, check_read_only, file_paths

LINE = {"timestamp": "2026-03-01T10:00:00Z", "service": "ledger-api", "level": "error", "message": "LOCK_TIMEOUT"}
SEARCH = {"name": "search_logs", "description": "Search logs.", "source": "logs"}


def _domain(tmp_path: Path) -> tuple[Path, Path]:
    """(a domain directory with logs/app.jsonl and t.csv, a sibling folder outside it with secret files)."""
    domain, outside = tmp_path / "acme", tmp_path / "outside"
    (domain / "logs").mkdir(parents=True)
    outside.mkdir()
    (domain / "logs" / "app.jsonl").write_text(json.dumps(LINE) + "\n")
    (domain / "t.csv").write_text("a,b\n1,2\n")
    (outside / "secret.jsonl").write_text(json.dumps({**LINE, "message": "SECRET LINE"}) + "\n")
    (outside / "secret.csv").write_text("a,b\n3,4\n")
    return domain, outside


def _build(sources: dict, tools: list[dict], base: Path) -> list:
    parsed = parse_sources(sources)
    [(name, source)] = parsed.items()
    return CONNECTORS[source.kind].build_tools(name, source, parse_tools(tools, parsed), base_dir=base)


@pytest.mark.parametrize("path", ["../outside/*.jsonl", "logs/../../outside/secret.jsonl", "{outside}/secret.jsonl",
                                  "/etc/passwd"])
def test_a_log_path_outside_the_domain_is_a_config_error(tmp_path: Path, path: str) -> None:
    domain, outside = _domain(tmp_path)
    sources = {"logs": {"kind": "logfiles", "path": path.format(outside=outside)}}
    with pytest.raises(ConfigError, match=r"sources\.logs\.path: .*outside the domain directory"):
        _build(sources, [SEARCH], domain)


def test_opting_out_reads_outside_files(tmp_path: Path, make_toolbox) -> None:
    domain, _ = _domain(tmp_path)
    sources = {"logs": {"kind": "logfiles", "path": "../outside/*.jsonl", "allow_outside_domain": True}}
    result = make_toolbox(sources, [SEARCH], domain).call("search_logs")
    assert result.success and "SECRET LINE" in result.output


def test_a_symlink_leading_out_and_a_fifo_are_skipped_and_named(tmp_path: Path) -> None:
    domain, outside = _domain(tmp_path)
    (domain / "logs" / "link.jsonl").symlink_to(outside / "secret.jsonl")
    os.mkfifo(domain / "logs" / "pipe.jsonl")
    # In a subprocess: the old reader handed the FIFO to DuckDB, which blocks on it; a hang must fail, not stall.
    code = f"""
import json, sys
from pathlib import Path
from evigate.store import AuditStore
from evigate.tools import Toolbox, ToolRegistry, DataSource
from evigate.tools.connectors import CONNECTORS, build_tools, parse_sources, parse_tools
sources = parse_sources({{"logs": {{"kind": "logfiles", "path": "logs/*.jsonl"}}}})
tools = parse_tools([{SEARCH!r}], sources)
check = CONNECTORS["logfiles"].check("logs", sources["logs"], base_dir=Path(sys.argv[1]))
with AuditStore(":memory:") as store:
    toolbox = Toolbox(store, store.start_session("q"), registry=ToolRegistry(build_tools(sources, tools,
                      base_dir=Path(sys.argv[1]))), source=DataSource(store))
    result = toolbox.call("search_logs")
print(json.dumps({{"check": check.detail, "reachable": check.reachable, "output": result.output,
                  "details": result.retrieval_details}}))
"""
    done = subprocess.run([sys.executable, "-c", code, str(domain)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-800:]
    seen = json.loads(done.stdout)
    assert seen["reachable"] and "1 file, 1 lines" in seen["check"]
    assert "link.jsonl (leads outside the domain directory)" in seen["check"]
    assert "pipe.jsonl (is a FIFO" in seen["check"]
    assert "LOCK_TIMEOUT" in seen["output"] and "SECRET LINE" not in seen["output"]
    assert set(seen["details"]["skipped_files"]) == {str(domain / "logs" / "link.jsonl"),
                                                     str(domain / "logs" / "pipe.jsonl")}


@pytest.mark.parametrize("sql", ["SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM read_csv('../secret.csv')",
                                 "SELECT * FROM read_csv(['t.csv', '/etc/passwd'])", "SELECT * FROM '/etc/passwd'",
                                 "SELECT * FROM glob('/etc/*')",
                                 "SELECT * FROM t JOIN read_parquet('/x.parquet') USING (a)"])
def test_a_sql_statement_reading_files_outside_the_domain_is_a_config_error(tmp_path: Path, sql: str,
                                                                             monkeypatch) -> None:
    domain, _ = _domain(tmp_path)
    monkeypatch.chdir(domain)  # DuckDB resolves a statement's relative paths from the working directory
    sources = {"files": {"kind": "sql", "engine": "duckdb", "files": {"t": "t.csv"}}}
    with pytest.raises(ConfigError, match=r"tools\.peek\.sql: .*outside the domain directory"):
        _build(sources, [{"name": "peek", "description": "d", "source": "files", "sql": sql}], domain)


@pytest.mark.parametrize("sql", ["SELECT * FROM read_text(:path)", "SELECT * FROM read_csv('t' || '.csv')",
                                 "SELECT pg_read_file('/etc/passwd')", "SELECT * FROM read_csv(['t.csv', :p])"])
def test_file_readers_with_computed_paths_and_server_file_functions_are_refused(sql: str) -> None:
    with pytest.raises(UnsafeSQL):
        check_read_only(sql)


def test_file_paths_finds_literal_paths_and_ignores_names_that_are_not_calls() -> None:
    assert file_paths("SELECT read_csv, glob FROM t WHERE x = 'read_text(1)'") == []
    assert file_paths("SELECT * FROM read_csv(['a.csv', 'b.csv'], header = true) JOIN 'c.parquet' USING (id)") == [
        "a.csv", "b.csv", "c.parquet"]


def test_declared_files_outside_need_the_opt_out(tmp_path: Path, make_toolbox) -> None:
    domain, _ = _domain(tmp_path)
    sources = {"files": {"kind": "sql", "engine": "duckdb", "files": {"s": "../outside/secret.csv"}}}
    tool = {"name": "peek", "description": "d", "source": "files", "sql": "SELECT a FROM s"}
    with pytest.raises(ConfigError, match=r"sources\.files\.files\.s: .*outside the domain directory"):
        _build(sources, [tool], domain)
    sources["files"]["allow_outside_domain"] = True
    result = make_toolbox(sources, [tool], domain).call("peek")
    assert result.success and "a=3" in result.output


def test_duckdb_connections_are_sandboxed_at_run_time_too(tmp_path: Path) -> None:
    domain, _ = _domain(tmp_path)
    [source] = parse_sources({"f": {"kind": "sql", "engine": "duckdb", "files": {"t": "t.csv"}}}).values()
    runner = DuckDBRunner(source, domain)
    assert runner.run("SELECT a FROM t", {}, 10)[1] == [(1,)]
    settings = runner.run("SELECT current_setting('autoinstall_known_extensions'), "
                          "current_setting('autoload_known_extensions'), current_setting('enable_external_access')",
                          {}, 1)[1]
    assert settings == [(False, False, False)]
    for sql in ("SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM read_text('https://example.com/x')",
                "SET enable_external_access = true"):
        with pytest.raises(ToolError) as raised:
            runner.run(sql, {}, 10)
        assert "root:" not in str(raised.value) and "install" not in str(raised.value).lower()
    [logs] = parse_sources({"logs": {"kind": "logfiles", "path": "logs/*.jsonl"}}).values()
    reader = LogReader(logs, domain)
    with reader.connect(reader.files()) as connection:
        assert connection.execute("SELECT current_setting('autoinstall_known_extensions'), "
                                  "current_setting('enable_external_access')").fetchone() == (False, False)
        with pytest.raises(Exception, match="disabled by configuration"):
            connection.execute("SELECT * FROM read_text('/etc/passwd')")


def test_a_knowledge_folder_outside_the_domain_needs_the_opt_out(tmp_path: Path) -> None:
    domain, outside = _domain(tmp_path)
    (outside / "runbook.md").write_text("# Runbook\n\n## LOCK_TIMEOUT\n\nRetry the booking.\n")
    tool = {"name": "lookup_knowledge", "description": "Runbooks.", "source": "kb"}
    with pytest.raises(ConfigError, match=r"sources\.kb\.path: .*outside the domain directory"):
        _build({"kb": {"kind": "knowledge", "path": "../outside"}}, [tool], domain)
    [source] = parse_sources({"kb": {"kind": "knowledge", "path": "../outside"}}).values()
    assert not CONNECTORS["knowledge"].check("kb", source, base_dir=domain).reachable
    assert _build({"kb": {"kind": "knowledge", "path": "../outside", "allow_outside_domain": True}}, [tool], domain)
