"""Prometheus connector: PromQL templates declared per tool, run as instant or range queries over the HTTP API.

A tool's `query` is a PromQL template: `$name` / `${name}` stand for the tool's declared `params` (strings are
escaped for a PromQL string literal, so they belong inside quotes: `{service="$service"}`), and `$window` /
`$step` for the query's range and resolution. The evidence text echoes the query and summarises each series:
points, min, max, last and, with a `threshold`, when it was crossed and for how long.
"""

from __future__ import annotations

import math
import string
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import Field, create_model, field_validator, model_validator

from evigate.errors import ConfigError, ToolError
from evigate.redaction import redact_secrets, redact_url
from evigate.rules.text.times import UTC_TIME_HELP, format_duration, iso, parse_duration, parse_time
from evigate.signatures.tooling import WITHIN_THRESHOLD
from evigate.tools.base import Tool, ToolArgs, ToolOutput
from evigate.tools.connectors.base import (
    ConnectorTool,
    SourceCheck,
    SourceConfig,
    ToolConfig,
    env_name,
    secret_from_env,
)
from evigate.tools.formatting import one_line

RESERVED = frozenset({"start", "end", "step", "time", "window"})
MAX_POINTS = 11_000  # Prometheus' own limit per series is 11,000 points
TARGET_POINTS = 120
MAX_INTERVALS = 3


class PrometheusSource(SourceConfig):
    kind: Literal["prometheus"]
    url: str = Field(pattern=r"^https?://", description="base URL, e.g. http://prometheus:9090")
    token_env: str | None = Field(default=None, description="env var holding a bearer token")
    username: str | None = None
    password_env: str | None = Field(default=None, description="env var holding the basic-auth password")
    max_series: int = Field(default=20, ge=1, le=500, description="series summarised per call at most")

    _env = field_validator("token_env", "password_env")(env_name)


class PrometheusToolSpec(ToolConfig):
    query: str = Field(min_length=1, description="PromQL template: $param, ${param}, $window, $step")
    mode: Literal["range", "instant"] = "range"
    window: str = Field(default="1h", description="default range when the call gives no start")
    step: str | None = Field(default=None, description="resolution; default: the window / 120, at least 15s")
    threshold: float | None = Field(default=None, description="report when series cross this value")
    above: bool = Field(default=True, description="true: crossing means > threshold; false: < threshold")
    unit: str = ""

    @field_validator("window", "step")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)
        return value

    @model_validator(mode="after")
    def _template(self) -> PrometheusToolSpec:
        clash = RESERVED & set(self.params)
        if clash:
            raise ValueError(f"params {sorted(clash)} are reserved (start, end, step, time and window are built in)")
        try:
            names = {match.group("named") or match.group("braced")
                     for match in string.Template.pattern.finditer(self.query) if not match.group("escaped")}
        except ValueError as exc:
            raise ValueError(f"query: {exc}") from None
        names.discard(None)
        unknown = names - set(self.params) - {"window", "step"}
        if unknown:
            raise ValueError(f"query uses ${', $'.join(sorted(unknown))} but params declares no such argument")
        return self


def _promql_literal(value: Any) -> str:
    """A value safe inside a PromQL double-quoted string (or a bare number)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "")


class PrometheusClient:
    """The two query endpoints plus the metric-name list, with auth from the environment."""

    def __init__(self, source: PrometheusSource) -> None:
        self.source = source

    def _client(self) -> httpx.Client:
        headers = {}
        token = secret_from_env(self.source.token_env, what="prometheus token_env")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        auth = None
        if self.source.username:
            password = secret_from_env(self.source.password_env, what="prometheus password_env") or ""
            auth = httpx.BasicAuth(self.source.username, password)
        return httpx.Client(base_url=self.source.url.rstrip("/"), headers=headers, auth=auth,
                            timeout=self.source.timeout_s, follow_redirects=False)

    def get(self, path: str, params: dict[str, Any]) -> Any:
        try:
            with self._client() as client:
                response = client.get(path, params=params)
        except httpx.TimeoutException:
            raise ToolError(f"prometheus did not answer within {self.source.timeout_s:g}s") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"prometheus at {redact_url(self.source.url)} unreachable: {type(exc).__name__}: "
                            f"{redact_secrets(str(exc))}") from None
        if response.status_code in (401, 403):
            raise ToolError(f"prometheus refused the credentials (HTTP {response.status_code}); check "
                            f"{self.source.token_env or self.source.password_env or 'token_env / password_env'}")
        try:
            body = response.json()
        except ValueError:
            raise ToolError(f"prometheus answered HTTP {response.status_code} without JSON: "
                            f"{one_line(response.text, 200)}") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            error = body.get("error", response.reason_phrase) if isinstance(body, dict) else response.reason_phrase
            kind = body.get("errorType", "error") if isinstance(body, dict) else "error"
            raise ToolError(f"prometheus {kind}: {one_line(str(error), 300)}")
        return body.get("data")


def _labels(metric: dict[str, str]) -> str:
    name = metric.get("__name__", "")
    rest = ", ".join(f'{key}="{value}"' for key, value in sorted(metric.items()) if key != "__name__")
    return f"{name}{{{rest}}}" if rest or not name else name


def _number(value: float, unit: str) -> str:
    if math.isnan(value):
        return "NaN"
    text = f"{value:.4g}" if abs(value) < 1e6 else f"{value:.6g}"
    return f"{text}{unit}"


def _crossings(points: list[tuple[float, float]], threshold: float, above: bool) -> list[tuple[float, float, int]]:
    """(first, last, count) runs of consecutive points beyond the threshold."""
    runs: list[tuple[float, float, int]] = []
    current: list[float] = []
    for stamp, value in points:
        beyond = value > threshold if above else value < threshold
        if beyond:
            current.append(stamp)
        elif current:
            runs.append((current[0], current[-1], len(current)))
            current = []
    if current:
        runs.append((current[0], current[-1], len(current)))
    return runs


def _stamp(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


def summarise_series(metric: dict[str, str], points: list[tuple[float, float]], spec: PrometheusToolSpec
                     ) -> tuple[str, dict[str, Any]]:
    """One evidence line for a series, and its figures for retrieval_details."""
    unit = spec.unit
    finite = [(stamp, value) for stamp, value in points if not math.isnan(value)]
    label = _labels(metric)
    if not finite:
        return f"{label}: {len(points)} points, all NaN", {"series": label, "points": len(points)}
    if len(points) == 1:
        stamp, value = finite[0]
        line = f"{label}: {_number(value, unit)} at {_stamp(stamp)}"
        figures = {"series": label, "points": 1, "value": value, "at": _stamp(stamp)}
        if spec.threshold is not None:
            beyond = value > spec.threshold if spec.above else value < spec.threshold
            side = "above" if spec.above else "below"
            line += f" ({side if beyond else 'not ' + side} {_number(spec.threshold, unit)})"
            figures["crossed"] = beyond
        return line, figures
    low = min(finite, key=lambda point: point[1])
    high = max(finite, key=lambda point: point[1])
    last = finite[-1]
    line = (f"{label}: {len(points)} points, min {_number(low[1], unit)} at {_stamp(low[0])}, max "
            f"{_number(high[1], unit)} at {_stamp(high[0])}, last {_number(last[1], unit)} at {_stamp(last[0])}")
    figures: dict[str, Any] = {"series": label, "points": len(points), "min": low[1], "max": high[1],
                               "last": last[1], "last_at": _stamp(last[0])}
    if spec.threshold is not None:
        runs = _crossings(finite, spec.threshold, spec.above)
        side = "above" if spec.above else "below"
        threshold = _number(spec.threshold, unit)
        if not runs:
            line += f"; never {side} {threshold}"
        else:
            spans = [f"{_stamp(first)} to {_stamp(end)} ({count} points)" for first, end, count in runs[:MAX_INTERVALS]]
            more = f" and {len(runs) - MAX_INTERVALS} more" if len(runs) > MAX_INTERVALS else ""
            line += f"; {side} {threshold} from " + ", ".join(spans) + more
            figures["first_crossed_at"] = _stamp(runs[0][0])
        figures["crossings"] = len(runs)
    return line, figures


class PrometheusTool(ConnectorTool):
    def __init__(self, config: PrometheusToolSpec, client: PrometheusClient, max_series: int) -> None:
        fields = {name: spec.field() for name, spec in config.params.items()}
        if config.mode == "range":
            start_help = f"range start (default: end - {config.window}); {UTC_TIME_HELP}"
            fields["start"] = (str | None, Field(default=None, max_length=64, description=start_help))
            fields["end"] = (str | None, Field(default=None, max_length=64, description="range end (default: now)"))
            fields["step"] = (str | None, Field(default=None, max_length=16, description="resolution, e.g. 1m"))
        else:
            fields["time"] = (str | None, Field(default=None, max_length=64,
                                                description=f"evaluation time (default: now); {UTC_TIME_HELP}"))
        model = create_model("".join(p.title() for p in config.name.split("_")) + "Args", __base__=ToolArgs, **fields)
        super().__init__(config, model)
        self.spec_ = config
        self.client = client
        self.max_series = max_series

    def _window(self, args: Any, now: Callable[[], datetime]) -> tuple[datetime, datetime, float]:
        try:
            end = parse_time(args.end, now=now) if args.end else now()
            default_start = end - timedelta(seconds=parse_duration(self.spec_.window))
            start = parse_time(args.start, now=now) if args.start else default_start
            if args.step:
                step = parse_duration(args.step)
            elif self.spec_.step:
                step = parse_duration(self.spec_.step)
            else:
                step = max(15.0, (end - start).total_seconds() / TARGET_POINTS)
        except ValueError as exc:
            raise ToolError(f"{self.name}: {exc}") from None
        if end <= start:
            raise ToolError(f"{self.name}: end {iso(end)} is not after start {iso(start)}")
        if (end - start).total_seconds() / step > MAX_POINTS:
            raise ToolError(f"{self.name}: step {format_duration(step)} gives more than {MAX_POINTS} points; "
                            "use a larger step or a shorter range")
        return start, end, step

    def promql(self, args: Any, window: float, step: float) -> str:
        values = {name: _promql_literal(getattr(args, name)) for name in self.spec_.params
                  if getattr(args, name) is not None}
        values.update(window=format_duration(window), step=format_duration(step))
        try:
            return string.Template(self.spec_.query).substitute(values)
        except KeyError as exc:
            raise ToolError(f"{self.name}: argument {exc.args[0]} is required by the query") from None

    def query(self, args: Any, now: Callable[[], datetime]) -> ToolOutput:
        if self.spec_.mode == "range":
            start, end, step = self._window(args, now)
            promql = self.promql(args, (end - start).total_seconds(), step)
            data = self.client.get("/api/v1/query_range", {"query": promql, "start": start.timestamp(),
                                                           "end": end.timestamp(), "step": step})
            header = (f"{self.name}: query `{promql}` from {iso(start)} to {iso(end)} step {format_duration(step)}")
        else:
            try:
                moment = parse_time(args.time, now=now) if args.time else now()
            except ValueError as exc:
                raise ToolError(f"{self.name}: {exc}") from None
            promql = self.promql(args, parse_duration(self.spec_.window), parse_duration(self.spec_.step or "1m"))
            data = self.client.get("/api/v1/query", {"query": promql, "time": moment.timestamp()})
            header = f"{self.name}: query `{promql}` at {iso(moment)}"
        return self._render(header, promql, data)

    def _render(self, header: str, promql: str, data: Any) -> ToolOutput:
        if not isinstance(data, dict):
            raise ToolError(f"{self.name}: prometheus returned no data object")
        kind, result = data.get("resultType"), data.get("result")
        if kind == "scalar" or kind == "string":
            result = [{"metric": {}, "value": result}]
        if not isinstance(result, list):
            raise ToolError(f"{self.name}: unexpected prometheus result {kind!r}")
        lines, figures = [], []
        for series in result[: self.max_series]:
            raw = series.get("values") or ([series["value"]] if series.get("value") else [])
            points = [(float(stamp), float(value)) for stamp, value in raw]
            line, numbers = summarise_series(series.get("metric") or {}, points, self.spec_)
            lines.append(line)
            figures.append(numbers)
        details: dict[str, Any] = {"query": promql, "result_type": kind, "series": len(result), "summaries": figures}
        if self.spec_.threshold is not None and figures and len(result) <= self.max_series:
            # Healthy only when every series was read and checked: a series not shown, or all NaN, may have crossed.
            details[WITHIN_THRESHOLD] = all(
                figure.get("crossings") == 0 or figure.get("crossed") is False for figure in figures)
        if not result:
            return ToolOutput(text=f"{header}: no rows (no series matched)", retrieval_details=details)
        more = f" ({len(result) - self.max_series} more not shown)" if len(result) > self.max_series else ""
        return ToolOutput(text="\n".join([f"{header}: {len(result)} series{more}", *lines]), retrieval_details=details)


class PrometheusConnector:
    kind = "prometheus"
    Source = PrometheusSource
    ToolSpec = PrometheusToolSpec

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        client = PrometheusClient(source)
        return [PrometheusTool(tool, client, source.max_series) for tool in tools]

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        started = time.perf_counter()
        try:
            names = PrometheusClient(source).get("/api/v1/label/__name__/values", {})
        except (ToolError, ConfigError) as exc:
            return SourceCheck.timed(started, source_name, self.kind, reachable=False, detail=str(exc))
        count = len(names) if isinstance(names, list) else 0
        return SourceCheck.timed(started, source_name, self.kind, reachable=True, seen=count,
                                 detail=f"{count} metric names")
