"""Log-file connector: JSON lines, logfmt or plain text, from one file or a glob, read through DuckDB.

A field map says which field of a record is the timestamp, service, level, message, trace id and business id
(an order, payment or tenant id: whatever the domain's incidents are about). Plain-text lines are split by a
regular expression with named groups called like the field map's keys.
"""

from __future__ import annotations

import glob
import re
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import Field, field_validator, model_validator

from evigate.errors import ConfigError, ToolError
from evigate.files import regular_file_problem
from evigate.rules.text.times import UTC_TIME_HELP, iso, parse_time
from evigate.tools.base import Tool, ToolArgs, ToolOutput
from evigate.tools.connectors.base import (
    ConnectorTool,
    FileSourceConfig,
    SourceCheck,
    ToolConfig,
    _Strict,
    confined_path,
    inside,
    refuse_params,
)
from evigate.tools.connectors.duckrun import allowed_roots, run_duckdb, sandboxed_connection
from evigate.tools.formatting import one_line

FIELDS = ("timestamp", "service", "level", "message", "trace_id", "business_id")
DEFAULT_TEXT_PATTERN = (
    r"^(?P<timestamp>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\s+"
    r"(?P<level>[A-Za-z]+)\s+(?P<service>[\w.-]+)\s+(?P<message>.*)$"
)
MAX_LIMIT = 200
LINE_CHARS = 400


class FieldMap(_Strict):
    """Names of the record fields (JSON keys, logfmt keys or regex group names) for each role."""

    timestamp: str = "timestamp"
    service: str | None = "service"
    level: str | None = "level"
    message: str = "message"
    trace_id: str | None = "trace_id"
    business_id: str | None = None


class LogFilesSource(FileSourceConfig):
    kind: Literal["logfiles"]
    path: str = Field(description="a file or a glob (e.g. logs/*.jsonl), relative to the domain directory")
    format: Literal["jsonl", "logfmt", "text"] = "jsonl"
    fields: FieldMap = Field(default_factory=FieldMap)
    text_pattern: str = Field(default=DEFAULT_TEXT_PATTERN,
                              description="for format: text, a regex whose named groups are field-map names")
    max_rows_scanned: int = Field(default=2_000_000, ge=1, description="lines read per call at most")

    @model_validator(mode="after")
    def _pattern(self) -> LogFilesSource:
        if self.format == "text":
            try:
                groups = re.compile(self.text_pattern).groupindex
            except re.error as exc:
                raise ValueError(f"text_pattern is not a regular expression: {exc}") from None
            needed = {self.fields.timestamp, self.fields.message}
            if not needed <= set(groups):
                raise ValueError(f"text_pattern needs named groups {sorted(needed)}; it has {sorted(groups)}")
        return self


class LogFilesToolSpec(ToolConfig):
    pass


class LogQueryArgs(ToolArgs):
    start: str | None = Field(default=None, max_length=64, description=f"window start; {UTC_TIME_HELP}")
    end: str | None = Field(default=None, max_length=64, description="window end (same formats)")
    service: str | None = Field(default=None, max_length=128, description="service name, exact")
    level: str | None = Field(default=None, max_length=16, description="log level, e.g. ERROR (case-insensitive)")
    keyword: str | None = Field(default=None, max_length=200, description="case-insensitive substring of the message")
    trace_id: str | None = Field(default=None, max_length=128, description="trace id, exact")
    business_id: str | None = Field(default=None, max_length=128, description="business id (order, payment...)")
    limit: int = Field(default=50, ge=1, le=MAX_LIMIT, description="maximum lines returned")

    @field_validator("start", "end")
    @classmethod
    def _time(cls, value: str | None) -> str | None:
        if value:
            parse_time(value)
        return value or None


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class LogReader:
    """SQL over the files of one source: a relation with the six role columns (VARCHAR, ts as TIMESTAMPTZ)."""

    def __init__(self, source: LogFilesSource, base_dir: Path, where: str = "path") -> None:
        self.source = source
        self.base_dir = base_dir
        self.pattern = str(confined_path(base_dir, source.path, allow_outside=source.allow_outside_domain,
                                         where=where))

    def scan(self) -> tuple[list[str], dict[str, str]]:
        """(the files to read, {file left out: why}): a FIFO or device would block DuckDB's reader, and a symlink
        leading out of the domain directory is out of bounds like a path that does."""
        files: list[str] = []
        skipped: dict[str, str] = {}
        for name in sorted(glob.glob(self.pattern, recursive=True)):
            problem = regular_file_problem(name)
            if problem is None and not self.source.allow_outside_domain and not inside(self.base_dir, name):
                problem = "leads outside the domain directory"
            if problem is None:
                files.append(name)
            else:
                skipped[name] = problem
        return files, skipped

    def files(self) -> list[str]:
        return self.scan()[0]

    def relation_sql(self, files: list[str]) -> str:
        """A SELECT producing columns ts, service, level, message, trace_id, business_id, line."""
        file_list = "[" + ", ".join(_sql_string(name) for name in files) + "]"
        roles = self.source.fields
        if self.source.format == "jsonl":
            def column(key: str | None) -> str:
                if key is None:
                    return "NULL"
                return f"CAST(json_extract_string(j, {_sql_string('$.' + _json_key(key))}) AS VARCHAR)"
            raw = (f"SELECT CAST(json AS JSON) AS j, CAST(json AS VARCHAR) AS line FROM read_json_objects("
                   f"{file_list}, format='newline_delimited', ignore_errors=true) WHERE json IS NOT NULL")
        else:
            lines = (f"SELECT unnest(string_split(content, chr(10))) AS line FROM read_text({file_list})")
            raw = f"SELECT NULL AS j, rtrim(line, chr(13)) AS line FROM ({lines}) WHERE trim(line) <> ''"
            if self.source.format == "logfmt":
                def column(key: str | None) -> str:
                    if key is None:
                        return "NULL"
                    regex = r"(?:^|\s)" + re.escape(key) + r'=("(?:[^"\\]|\\.)*"|\S*)'
                    value = f"regexp_extract(line, {_sql_string(regex)}, 1)"
                    return f"nullif(trim({value}, '\"'), '')"
            else:
                groups = re.compile(self.source.text_pattern).groupindex

                def column(key: str | None) -> str:
                    if key is None or key not in groups:
                        return "NULL"
                    return f"nullif(regexp_extract(line, {_sql_string(self.source.text_pattern)}, {groups[key]}), '')"
        return (
            f"SELECT {_timestamp(column(roles.timestamp))} AS ts, {column(roles.service)} AS service, "
            f"{column(roles.level)} AS level, {column(roles.message)} AS message, "
            f"{column(roles.trace_id)} AS trace_id, {column(roles.business_id)} AS business_id, line "
            f"FROM ({raw} LIMIT {self.source.max_rows_scanned})"
        )

    def connect(self, files: list[str]) -> duckdb.DuckDBPyConnection:
        return sandboxed_connection(allowed=allowed_roots(self.base_dir, files))


def _skipped_note(skipped: dict[str, str]) -> str:
    return "; skipped " + "; ".join(f"{name} ({why})" for name, why in skipped.items()) if skipped else ""


def _rows(connection: duckdb.DuckDBPyConnection, sql: str, params: list[Any], timeout_s: float
          ) -> list[tuple[Any, ...]]:
    return run_duckdb(connection, sql, params, timeout_s)[1]


def _timestamp(value: str) -> str:
    """ISO-8601 text, or epoch seconds / milliseconds, as TIMESTAMPTZ (NULL when it is neither)."""
    number = f"try_cast({value} AS DOUBLE)"
    epoch = f"to_timestamp(CASE WHEN {number} > 1e11 THEN {number} / 1000 ELSE {number} END)"
    return f"coalesce(try_cast({value} AS TIMESTAMPTZ), CASE WHEN {number} IS NOT NULL THEN {epoch} END)"


def _json_key(key: str) -> str:
    """A JSON path segment for key (dotted keys address nested objects: `http.status`)."""
    return ".".join(part if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) else '"' + part.replace('"', "") + '"'
                    for part in key.split("."))


class LogFilesTool(ConnectorTool):
    def __init__(self, config: LogFilesToolSpec, reader: LogReader, timeout_s: float) -> None:
        super().__init__(config, LogQueryArgs)
        self.reader = reader
        self.timeout_s = timeout_s

    def query(self, args: LogQueryArgs, now: Callable[[], datetime]) -> ToolOutput:
        files, skipped = self.reader.scan()
        if not files:
            raise ToolError(f"{self.name}: no log files match {self.reader.source.path}" + _skipped_note(skipped))
        where, params, echo = [], [], []
        for role in ("service", "trace_id", "business_id"):
            value = getattr(args, role)
            if value:
                where.append(f"{role} = ?")
                params.append(value)
                echo.append(f"{role}={value}")
        if args.level:
            where.append("upper(level) = ?")
            params.append(args.level.upper())
            echo.append(f"level={args.level.upper()}")
        # Python's strip, not pydantic's: a keyword of only separators or control characters (\x1f) is no filter.
        keyword = (args.keyword or "").strip()
        if keyword:
            where.append("contains(lower(coalesce(message, line)), ?)")
            params.append(keyword.lower())
            echo.append(f"keyword={keyword!r}")
        for bound, op in (("start", ">="), ("end", "<=")):
            value = getattr(args, bound)
            if value:
                moment = parse_time(value, now=now)
                where.append(f"ts {op} ?")
                params.append(moment)
                echo.append(f"{bound}={iso(moment)}")
        condition = " AND ".join(where) or "TRUE"
        sql = f"SELECT * FROM ({self.reader.relation_sql(files)}) WHERE {condition}"
        started = time.monotonic()
        connection = self.reader.connect(files)
        try:
            rows = _rows(connection, f"{sql} ORDER BY ts NULLS LAST LIMIT {args.limit + 1}",
                                     params, self.timeout_s)
            counts = _rows(connection, f"SELECT upper(level), count(*) FROM ({sql}) GROUP BY 1",
                                       params, max(0.1, self.timeout_s - (time.monotonic() - started)))
        finally:
            connection.close()
        level_counts = {str(level) if level is not None else "-": count for level, count in counts}
        total = sum(level_counts.values())
        shown = rows[: args.limit]
        filters = ", ".join(echo) or "no filters"
        details: dict[str, Any] = {"files": len(files), "matched": total, "returned": len(shown),
                                   "level_counts": level_counts, "filters": filters}
        if skipped:
            details["skipped_files"] = skipped
        if not shown:
            return ToolOutput(text=f"{self.name} ({filters}): no rows", retrieval_details=details)
        header = f"{self.name} ({filters}): {total} matching lines"
        if total > len(shown):
            header += f", first {len(shown)} shown"
        if level_counts:
            header += " — levels " + ", ".join(f"{level}={count}" for level, count in sorted(level_counts.items()))
        lines = [header]
        for ts, service, level, message, trace_id, business_id, line in shown:
            parts = [iso(ts) if isinstance(ts, datetime) else "?", level or "-", service or "-"]
            if trace_id:
                parts.append(f"trace={trace_id}")
            if business_id:
                parts.append(f"id={business_id}")
            parts.append(one_line(message if message is not None else line, LINE_CHARS))
            lines.append(" ".join(parts))
        return ToolOutput(text="\n".join(lines), retrieval_details=details)


class LogFilesConnector:
    kind = "logfiles"
    Source = LogFilesSource
    ToolSpec = LogFilesToolSpec

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        reader = LogReader(source, base_dir, f"sources.{source_name}.path")
        files, skipped = reader.scan()
        if not files:
            raise ConfigError(f"sources.{source_name}.path: no log files match {reader.pattern}"
                              + _skipped_note(skipped))
        built = []
        for tool in tools:
            refuse_params(tool, self.kind)
            built.append(LogFilesTool(tool, reader, source.timeout_s))
        return built

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        started = time.perf_counter()
        try:
            reader = LogReader(source, base_dir, f"sources.{source_name}.path")
        except ConfigError as exc:
            return SourceCheck(source=source_name, kind=self.kind, reachable=False, detail=str(exc))
        files, skipped = reader.scan()
        if not files:
            return SourceCheck(source=source_name, kind=self.kind, reachable=False,
                               detail=f"no log files match {reader.pattern}" + _skipped_note(skipped))
        try:
            connection = reader.connect(files)
        except ToolError as exc:
            return SourceCheck(source=source_name, kind=self.kind, reachable=False, detail=str(exc))
        try:
            rows = _rows(connection, f"SELECT count(*), count(ts), count(message) FROM "
                                     f"({reader.relation_sql(files)})", [], source.timeout_s)
        except ToolError as exc:
            return SourceCheck(source=source_name, kind=self.kind, reachable=False, detail=str(exc))
        finally:
            connection.close()
        total, timed, with_message = rows[0]
        problems = Counter()
        if total and timed < total:
            problems["lines without a parseable timestamp"] = total - timed
        if total and with_message < total:
            problems["lines without a message"] = total - with_message
        detail = f"{len(files)} file{'s' if len(files) != 1 else ''}, {total} lines"
        if problems:
            detail += "; " + ", ".join(f"{count} {what}" for what, count in problems.items())
        detail += _skipped_note(skipped)
        return SourceCheck.timed(started, source_name, self.kind, reachable=total > 0 and timed > 0, seen=total,
                                 detail=detail)
