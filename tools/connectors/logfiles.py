"""`kind: logfiles`: JSON-lines log files (one file or a glob), read through DuckDB with a field map."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, ConfigDict, Field, create_model

from evigate.tools.base import Tool, ToolOutput
from evigate.tools.connectors.base import SourceCheck, SourceConfig, ToolConfig
from evigate.tools.formatting import one_line
from evigate.tools.source import DataSource
from evigate.tools.timeparse import format_second
from evigate.tools.windows import WindowArgs

LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")


class FieldMap(BaseModel):
    """Which JSON field holds what; `ids` maps a business identifier (order_id, ticket_id …) to its field."""

    model_config = ConfigDict(extra="forbid")
    ts: str = "ts"
    level: str = "level"
    service: str = "service"
    message: str = "message"
    trace_id: str | None = "trace_id"
    ids: dict[str, str] = Field(default_factory=dict)


class LogFilesSource(SourceConfig):
    kind: Literal["logfiles"] = "logfiles"
    path: str = Field(description="a file or a glob (e.g. logs/*.jsonl), relative to the domain directory")
    format: Literal["jsonl"] = "jsonl"
    fields: FieldMap = Field(default_factory=FieldMap)


class LogFilesTool(ToolConfig):
    limit: int = Field(default=50, ge=1, le=200, description="most lines returned per call")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _relation(source: LogFilesSource, base_dir: Path) -> str:
    path = source.path if Path(source.path).is_absolute() else str(base_dir / source.path)
    return f"read_json_auto({_quote(path)}, format='newline_delimited')"


def _column(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class LogSearch(Tool):
    """Log lines of the source matching every given filter, oldest first."""

    def __init__(self, spec: LogFilesTool, source: LogFilesSource, base_dir: Path) -> None:
        self.name, self.description, self.is_evidence = spec.name, spec.description, spec.is_evidence  # type: ignore
        self.source, self.base_dir, self.limit = source, base_dir, spec.limit
        fields: dict[str, Any] = {
            "service": (str | None, Field(default=None, max_length=64, description="service id")),
            "level": (Literal["DEBUG", "INFO", "WARN", "ERROR"] | None, Field(default=None, description="min level")),
            "keyword": (str | None, Field(default=None, max_length=200, description="substring of the message")),
        }
        if source.fields.trace_id:
            fields["trace_id"] = (str | None, Field(default=None, max_length=64, description="trace id"))
        for ident in source.fields.ids:
            fields[ident] = (str | None, Field(default=None, max_length=64, description=f"{ident} of the record"))
        self.Args = create_model(f"{spec.name}_args", __base__=WindowArgs, **fields)  # type: ignore[misc]

    def run(self, args: Any, world: DataSource) -> ToolOutput:
        f = self.source.fields
        start, end = args.bounds(world)
        conditions, params = [], []
        columns = {"service": f.service, "trace_id": f.trace_id, **f.ids}
        for arg, column in columns.items():
            value = getattr(args, arg, None)
            if column and value is not None:
                conditions.append(f"lower(CAST({_column(column)} AS VARCHAR)) = lower(?)")
                params.append(str(value))
        if args.level is not None:
            wanted = LEVELS[LEVELS.index(args.level):]
            conditions.append(f"upper({_column(f.level)}) IN ({', '.join('?' for _ in wanted)})")
            params.extend(wanted)
        if args.keyword:
            conditions.append(f"strpos(lower({_column(f.message)}), lower(?)) > 0")
            params.append(args.keyword)
        ts = f"TRY_CAST({_column(f.ts)} AS TIMESTAMP)"
        for bound, op in ((start, ">="), (end, "<=")):
            if bound is not None:
                conditions.append(f"{ts} {op} ?")
                params.append(bound)
        where = (" WHERE " + " AND ".join(conditions)) if conditions else ""
        extra = [c for c in (f.trace_id, *f.ids.values()) if c]
        select = ", ".join([ts, _column(f.level), _column(f.service), *map(_column, extra), _column(f.message)])
        relation = _relation(self.source, self.base_dir)
        with duckdb.connect() as connection:
            total = connection.execute(f"SELECT count(*) FROM {relation}{where}", params).fetchone()[0]  # type: ignore
            rows = connection.execute(f"SELECT {select} FROM {relation}{where} ORDER BY 1 LIMIT ?",
                                      [*params, self.limit]).fetchall()
        shown = {k: v for k, v in args.model_dump(exclude={"time_window"}).items() if v is not None}
        described = " ".join(f"{k}={format_second(v) if isinstance(v, datetime) else v}" for k, v in shown.items())
        described = described or "(no filter)"
        if not total:
            return ToolOutput(text=f"{self.name} {described}: no rows (0 matching log lines)",
                              retrieval_details={"matched": 0, "returned": 0})
        names = ["trace" if c == f.trace_id else next(k for k, v in f.ids.items() if v == c) for c in extra]
        lines = [f"{self.name} {described}: {total} matching lines, showing {len(rows)} oldest first"]
        for row in rows:
            stamp = format_second(row[0]) if isinstance(row[0], datetime) else str(row[0])
            tags = [f"{name}={value}" for name, value in zip(names, row[3:-1], strict=True) if value not in (None, "")]
            lines.append(" ".join([stamp, str(row[1]), str(row[2]), *tags, one_line(str(row[-1]))]))
        return ToolOutput(text="\n".join(lines), retrieval_details={"matched": total, "returned": len(rows)})


class LogFilesConnector:
    kind = "logfiles"
    Source = LogFilesSource
    ToolSpec = LogFilesTool

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        return [LogSearch(spec, source, base_dir) for spec in tools]

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        started = time.perf_counter()
        try:
            with duckdb.connect() as connection:
                rows = connection.execute(f"SELECT count(*) FROM {_relation(source, base_dir)}").fetchone()[0]  # type: ignore
        except duckdb.Error as exc:
            return SourceCheck(source=source_name, kind=self.kind, reachable=False, detail=one_line(str(exc), 300))
        return SourceCheck(source=source_name, kind=self.kind, reachable=True, seen=int(rows),
                           latency_ms=round((time.perf_counter() - started) * 1000, 1), detail=source.path)
