"""SQL connector: named, parameterised, read-only queries over PostgreSQL (psycopg 3) or DuckDB over files.

Each tool is one declared statement with `:name` parameters (its `params`). It is checked at config time
(evigate.tools.connectors.sqlguard) and runs in a read-only transaction (PostgreSQL: `default_transaction_
read_only` plus `statement_timeout`) or on a read-only DuckDB connection over views of the declared Parquet/CSV
files, returning at most `max_rows` rows.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import Field, field_validator, model_validator

from evigate.errors import ConfigError, ToolError
from evigate.tools.base import Tool, ToolOutput
from evigate.tools.connectors.base import (
    ConnectorTool,
    FileSourceConfig,
    SourceCheck,
    ToolConfig,
    confined_path,
    env_name,
    secret_from_env,
)
from evigate.tools.connectors.duckrun import allowed_roots, run_duckdb, sandboxed_connection
from evigate.tools.connectors.sqlguard import UnsafeSQL, check_read_only, file_paths, render_params
from evigate.tools.formatting import one_line

CELL_CHARS = 200
VIEW_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"


class SQLSource(FileSourceConfig):
    kind: Literal["sql"]
    engine: Literal["postgresql", "duckdb"]
    host: str = "127.0.0.1"
    port: int = Field(default=5432, ge=1, le=65535)
    dbname: str | None = None
    user: str | None = None
    password_env: str | None = Field(default=None, description="env var holding the database password")
    dsn_env: str | None = Field(default=None, description="env var holding a full libpq connection string")
    files: dict[str, str] = Field(default_factory=dict,
                                  description="duckdb: view name → Parquet/CSV file or glob, relative to the domain")
    max_rows: int = Field(default=100, ge=1, le=10_000, description="rows returned per call at most")

    _env = field_validator("password_env", "dsn_env")(env_name)

    @model_validator(mode="after")
    def _engine_fields(self) -> SQLSource:
        if self.engine == "duckdb" and not self.files:
            raise ValueError("files: a duckdb source needs at least one view name → file")
        if self.engine == "postgresql" and not (self.dsn_env or self.dbname):
            raise ValueError("dbname (or dsn_env) is required for a postgresql source")
        for name in self.files:
            if not re.match(VIEW_NAME, name):
                raise ValueError(f"files: {name!r} is not a plain SQL identifier")
        return self


class SQLToolSpec(ToolConfig):
    sql: str = Field(min_length=1, description="one read-only statement with :name parameters")

    @field_validator("sql")
    @classmethod
    def _read_only(cls, sql: str) -> str:
        try:
            check_read_only(sql)
        except UnsafeSQL as exc:
            raise ValueError(str(exc)) from None
        return sql

    @model_validator(mode="after")
    def _declared(self) -> SQLToolSpec:
        used = check_read_only(self.sql)
        undeclared = sorted(set(used) - set(self.params))
        if undeclared:
            raise ValueError(f"sql uses :{', :'.join(undeclared)} but params declares no such argument")
        unused = sorted(set(self.params) - set(used))
        if unused:
            raise ValueError(f"params {unused} are not used by the sql")
        return self


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return one_line(str(value), CELL_CHARS)


def render_rows(name: str, columns: list[str], rows: list[tuple[Any, ...]], max_rows: int,
                echo: str) -> ToolOutput:
    shown = rows[:max_rows]
    details: dict[str, Any] = {"columns": columns, "returned": len(shown), "truncated": len(rows) > max_rows,
                               "query": echo}
    if not shown:
        return ToolOutput(text=f"{name} ({echo}): no rows", retrieval_details=details)
    more = f" (capped at {max_rows}; more rows exist)" if len(rows) > max_rows else ""
    lines = [f"{name} ({echo}): {len(shown)} rows{more}"]
    lines.extend("; ".join(f"{column}={_cell(value)}" for column, value in zip(columns, row, strict=False))
                 for row in shown)
    return ToolOutput(text="\n".join(lines), retrieval_details=details)


class PostgresRunner:
    def __init__(self, source: SQLSource) -> None:
        self.source = source

    def connect(self) -> Any:
        import psycopg

        timeout_ms = int(self.source.timeout_s * 1000)
        options = f"-c statement_timeout={timeout_ms} -c default_transaction_read_only=on"
        dsn = secret_from_env(self.source.dsn_env, what="sql dsn_env")
        params: dict[str, Any] = {"connect_timeout": max(1, int(self.source.timeout_s)), "options": options,
                                  "application_name": "evigate"}
        if dsn is None:
            params.update(host=self.source.host, port=self.source.port, dbname=self.source.dbname,
                          user=self.source.user)
            password = secret_from_env(self.source.password_env, what="sql password_env")
            if password is not None:
                params["password"] = password
        try:
            connection = psycopg.connect(dsn or "", **params)
        except psycopg.Error as exc:
            raise ToolError(f"postgresql connection failed: {one_line(str(exc), 300)}") from None
        connection.read_only = True
        return connection

    def run(self, sql: str, values: dict[str, Any], limit: int) -> tuple[list[str], list[tuple[Any, ...]]]:
        import psycopg

        with self.connect() as connection:
            try:
                with connection.cursor() as cursor:
                    cursor.execute(render_params(sql, "pyformat"), values)
                    columns = [column.name for column in cursor.description or []]
                    return columns, cursor.fetchmany(limit + 1)
            except psycopg.errors.QueryCanceled:
                raise ToolError(f"query exceeded the statement timeout of {self.source.timeout_s:g}s") from None
            except psycopg.Error as exc:
                raise ToolError(f"postgresql: {one_line(str(exc), 300)}") from None

    def check(self) -> tuple[int, str]:
        import psycopg

        try:
            return self._check()
        except psycopg.Error as exc:
            raise ToolError(f"postgresql: {one_line(str(exc), 300)}") from None

    def _check(self) -> tuple[int, str]:
        with self.connect() as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM information_schema.tables "
                           "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')")
            (tables,) = cursor.fetchone()
            cursor.execute("SHOW server_version")
            (version,) = cursor.fetchone()
            return int(tables), f"PostgreSQL {version}, {tables} tables"


class DuckDBRunner:
    """Views over the declared files in a small catalog database, opened read-only for every call."""

    def __init__(self, source: SQLSource, base_dir: Path, source_name: str = "sql") -> None:
        self.source = source
        self.paths = {name: confined_path(base_dir, path, allow_outside=source.allow_outside_domain,
                                          where=f"sources.{source_name}.files.{name}")
                      for name, path in source.files.items()}
        # What a connection may read: the domain directory and the declared files' folders, nothing else (a query's
        # own read_text('/etc/passwd') fails even if it got past the config-time check).
        self.allowed = allowed_roots(base_dir, self.paths.values())
        self._catalog: Path | None = None
        self._lock = threading.Lock()

    def check_paths(self, tool: SQLToolSpec, base_dir: Path) -> None:
        """ConfigError naming the tool when its statement reads a file outside the domain directory itself
        (`read_text('/etc/passwd')`, `FROM '../x.csv'`); relative paths are DuckDB's: from the working directory."""
        for path in file_paths(tool.sql):
            confined_path(base_dir, str(Path(path).expanduser().resolve()),
                          allow_outside=self.source.allow_outside_domain, where=f"tools.{tool.name}.sql")

    def _reader(self, path: Path) -> str:
        literal = "'" + str(path).replace("'", "''") + "'"
        suffix = path.name.lower()
        if suffix.endswith((".csv", ".csv.gz", ".tsv")):
            return f"read_csv({literal}, auto_detect=true)"
        return f"read_parquet({literal})"

    def catalog(self) -> Path:
        with self._lock:
            if self._catalog is None or not self._catalog.exists():
                folder = Path(tempfile.mkdtemp(prefix="evigate-sql-"))
                # The catalog holds only views: it goes with the runner (or at exit), not left in /tmp per process.
                weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
                catalog = folder / "catalog.duckdb"
                try:
                    with sandboxed_connection(str(catalog), allowed=self.allowed) as connection:
                        for name, path in self.paths.items():
                            connection.execute(f'CREATE VIEW "{name}" AS SELECT * FROM {self._reader(path)}')
                except duckdb.Error as exc:
                    raise ToolError(f"duckdb: {one_line(str(exc), 300)}") from None
                self._catalog = catalog
            return self._catalog

    def run(self, sql: str, values: dict[str, Any], limit: int) -> tuple[list[str], list[tuple[Any, ...]]]:
        connection = sandboxed_connection(str(self.catalog()), read_only=True, allowed=self.allowed)
        try:
            return run_duckdb(connection, render_params(sql, "duckdb"), values, self.source.timeout_s,
                              limit=limit + 1)
        finally:
            connection.close()

    def check(self) -> tuple[int, str]:
        rows = 0
        for name in self.paths:
            _, result = self.run(f'SELECT count(*) FROM "{name}"', {}, 1)
            rows += int(result[0][0])
        return rows, f"DuckDB over {len(self.paths)} files, {rows} rows"


class SQLTool(ConnectorTool):
    def __init__(self, config: SQLToolSpec, runner: PostgresRunner | DuckDBRunner, max_rows: int) -> None:
        super().__init__(config)
        self.spec_ = config
        self.runner = runner
        self.max_rows = max_rows

    def query(self, args: Any, now: Callable[[], datetime]) -> ToolOutput:
        values = {name: getattr(args, name) for name in self.spec_.params}
        columns, rows = self.runner.run(self.spec_.sql, values, self.max_rows)
        echo = ", ".join(f"{name}={value!r}" for name, value in values.items()) or "no parameters"
        return render_rows(self.name, columns, rows, self.max_rows, echo)


class SQLConnector:
    kind = "sql"
    Source = SQLSource
    ToolSpec = SQLToolSpec

    def _runner(self, source_name: str, source: SQLSource, base_dir: Path) -> PostgresRunner | DuckDBRunner:
        if source.engine == "postgresql":
            return PostgresRunner(source)
        return DuckDBRunner(source, base_dir, source_name)

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        runner = self._runner(source_name, source, base_dir)
        if isinstance(runner, DuckDBRunner):
            for name, path in runner.paths.items():
                if not any(path.parent.glob(path.name)):
                    raise ConfigError(f"sources.{source_name}.files.{name}: no file matches {path}")
            for tool in tools:
                runner.check_paths(tool, base_dir)
        return [SQLTool(tool, runner, source.max_rows) for tool in tools]

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        started = time.perf_counter()
        try:
            seen, detail = self._runner(source_name, source, base_dir).check()
        except (ToolError, ConfigError) as exc:
            return SourceCheck.timed(started, source_name, self.kind, reachable=False, detail=str(exc))
        return SourceCheck.timed(started, source_name, self.kind, reachable=True, seen=seen, detail=detail)
