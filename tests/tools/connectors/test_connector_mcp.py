"""MCP connector driving a third-party server, `prometheus-mcp-server` (PyPI), in front of a real Prometheus."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evigate.errors import ConfigError
from evigate.tools.connectors import CONNECTORS, parse_sources, parse_tools
from evigate.tools.connectors.mcp import args_model_from_schema, result_text
from tests.servers import free_port, running

SERVER = shutil.which("prometheus-mcp-server") or str(Path(sys.executable).parent / "prometheus-mcp-server")
RANGE = {"name": "latency_series", "source": "prom", "mcp_tool": "execute_range_query",
         "description": "Raw PromQL range query through the Prometheus MCP server."}


def _stdio(url: str, **extra) -> dict:
    env = {"PROMETHEUS_URL": url, "PROMETHEUS_DISABLE_LINKS": "true"}
    return {"prom": {"kind": "mcp", "command": [SERVER], "env": env,
                     "allow": ["list_*"], "prefix": "prom_", "not_evidence": ["list_metrics"], "timeout_s": 60,
                     **extra}}


@pytest.mark.servers
def test_stdio_tools_are_allow_listed_and_recorded(prometheus: str, make_toolbox, tmp_path: Path) -> None:
    toolbox = make_toolbox(_stdio(prometheus), [RANGE], tmp_path)
    assert toolbox.registry.names() == ["latency_series", "prom_list_metrics"]  # execute_query etc. not allowed
    args = {"query": 'ledger_request_seconds_p99{service="ledger-api"}', "start": "2026-03-01T10:20:00Z",
            "end": "2026-03-01T10:22:00Z", "step": "1m"}
    result = toolbox.call("latency_series", **args)
    assert result.success, result.error
    assert result.output.startswith("latency_series (MCP execute_range_query):\n")
    assert '[1772360400,"2.7"],[1772360460,"2.71"],[1772360520,"2.72"]' in result.output
    listed = toolbox.call("prom_list_metrics")
    assert listed.success and "ledger_request_seconds_p99" in listed.output
    missing = toolbox.call("latency_series", query="up")
    assert not missing.success and "start: Field required" in missing.error
    live = toolbox.registry.get("latency_series").client.live
    rebuilt = make_toolbox(_stdio(prometheus), [RANGE], tmp_path)  # building the tools again reuses the session
    assert rebuilt.registry.get("latency_series").client.live is live
    assert live.opened == 1  # the stdio server was started once, for both tool lists and all three calls
    rows = toolbox.invocations()
    assert [(row.tool_name, row.success, row.is_evidence) for row in rows] == [
        ("latency_series", True, True), ("prom_list_metrics", True, False), ("latency_series", False, True)]
    assert rows[0].input == args


@pytest.mark.servers
def test_server_errors_timeouts_and_missing_credentials_are_failed_calls(prometheus: str, make_toolbox,
                                                                        tmp_path: Path, monkeypatch) -> None:
    toolbox = make_toolbox(_stdio(prometheus), [RANGE], tmp_path)
    bad = toolbox.call("latency_series", query="rate(]", start="2026-03-01T10:00:00Z", end="2026-03-01T10:05:00Z",
                       step="1m")
    assert not bad.success and "latency_series" in bad.error
    [source] = parse_sources(_stdio(prometheus, env_from={"PROMETHEUS_PASSWORD": "ACME_PROM_PASSWORD"},
                                    timeout_s=0.3)).values()
    monkeypatch.delenv("ACME_PROM_PASSWORD", raising=False)
    unset = CONNECTORS["mcp"].check("prom", source, base_dir=tmp_path)
    assert not unset.reachable and "ACME_PROM_PASSWORD is not set" in unset.detail
    monkeypatch.setenv("ACME_PROM_PASSWORD", "s3cret")
    slow = CONNECTORS["mcp"].check("prom", source, base_dir=tmp_path)
    assert not slow.reachable and "within 0.3s" in slow.detail and "s3cret" not in slow.detail
    with pytest.raises(ConfigError, match=r"tools\.nope\.mcp_tool: the MCP server offers no tool 'nope'"):
        sources = parse_sources(_stdio(prometheus))
        CONNECTORS["mcp"].build_tools("prom", sources["prom"], parse_tools(
            [{"name": "nope", "source": "prom"}], sources), base_dir=tmp_path)


def _children_running(program: str) -> list[int]:
    """Pids of this process's children whose command line names `program` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and program in command:
            found.append(int(entry.name))
    return found


@pytest.mark.servers
def test_a_dead_server_fails_one_call_and_the_next_call_reopens(prometheus: str, make_toolbox, tmp_path) -> None:
    import signal

    before = set(_children_running("prometheus-mcp-server"))
    toolbox = make_toolbox(_stdio(prometheus, prefix="again_"), [{**RANGE, "name": "again_range"}], tmp_path)
    live = toolbox.registry.get("again_range").client.live
    assert toolbox.call("again_list_metrics").success
    started = set(_children_running("prometheus-mcp-server")) - before
    assert len(started) == 1, started  # this source's own server, started once for the list and the call
    for pid in started:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    broken = toolbox.call("again_list_metrics")
    assert not broken.success and "MCP server" in broken.error
    recovered = toolbox.call("again_list_metrics")
    assert recovered.success, recovered.error
    assert live.opened == 2


@pytest.mark.servers
def test_a_server_down_when_the_domain_loads_fails_its_calls_until_it_is_back(prometheus: str, make_toolbox,
                                                                               tmp_path: Path) -> None:
    """Before: the whole domain refused to load ("cannot list the MCP server's tools"), so no question could be asked
    while one source was down. Now its declared tools are recorded failures until the server answers again."""
    flag = tmp_path / "server-is-up"
    wrapper = f"test -f {flag} || {{ echo 'down for maintenance' >&2; exit 1; }}; exec {SERVER}"
    sources = _stdio(prometheus, command=["sh", "-c", wrapper], prefix="late_", timeout_s=30)
    toolbox = make_toolbox(sources, [{**RANGE, "name": "late_range"}], tmp_path)
    assert toolbox.registry.names() == ["late_range"]  # the pattern-allowed tools cannot be known yet
    args = {"query": 'ledger_request_seconds_p99{service="ledger-api"}', "start": "2026-03-01T10:20:00Z",
            "end": "2026-03-01T10:22:00Z", "step": "1m"}
    down = toolbox.call("late_range", **args)
    assert not down.success and "still unreachable" in down.error and "down for maintenance" in down.error
    flag.write_text("up")
    back = toolbox.call("late_range", **args)
    assert back.success, back.error
    assert '[1772360400,"2.7"]' in back.output
    wrong = toolbox.call("late_range", query="up")  # the real schema applies once the server is back
    assert not wrong.success and "start" in wrong.error
    rows = toolbox.invocations()
    assert [(row.tool_name, row.success) for row in rows] == [("late_range", False), ("late_range", True),
                                                              ("late_range", False)]


@pytest.fixture()
def http_server(prometheus: str, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PROMETHEUS_URL": prometheus, "PROMETHEUS_MCP_SERVER_TRANSPORT": "http",
           "PROMETHEUS_MCP_BIND_HOST": "127.0.0.1", "PROMETHEUS_MCP_BIND_PORT": str(port)}
    with running([SERVER], tmp_path / "mcp.log", env=env, cwd=tmp_path) as process:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with __import__("socket").create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.3)
        assert process.poll() is None, (tmp_path / "mcp.log").read_text()
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.servers
def test_streamable_http_transport(http_server: str, make_toolbox, tmp_path: Path) -> None:
    sources = {"prom": {"kind": "mcp", "transport": "http", "url": http_server, "timeout_s": 30}}
    instant = {"name": "instant_query", "source": "prom", "mcp_tool": "execute_query"}
    toolbox = make_toolbox(sources, [instant], tmp_path)
    assert toolbox.registry.get("instant_query").description.startswith("Execute a PromQL instant query")
    result = toolbox.call("instant_query", query="max(ledger_request_seconds_p99)", time="2026-03-01T10:25:00Z")
    assert result.success, result.error
    assert '"2.75"' in result.output
    [source] = parse_sources(sources).values()
    check = CONNECTORS["mcp"].check("prom", source, base_dir=tmp_path)
    assert check.reachable and check.seen >= 5
    toolbox.registry.get("instant_query").client.live.close()  # before the server stops


def test_schema_to_args_model_and_result_text() -> None:
    from mcp import types

    model = args_model_from_schema("t", {"type": "object", "required": ["match[]"], "properties": {
        "match[]": {"type": "string"}, "limit": {"type": "integer", "default": 10},
        "mode": {"enum": ["a", "b"]}, "tags": {"type": "array"},
        "opt": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    }})
    parsed = model.model_validate({"match[]": "up", "mode": "a", "tags": [1]})
    assert parsed.model_dump(by_alias=True, exclude_none=True) == {"match[]": "up", "limit": 10, "mode": "a",
                                                                   "tags": [1]}
    with pytest.raises(ValueError):
        model.model_validate({"match[]": "up", "mode": "c"})
    with pytest.raises(ValueError):
        model.model_validate({"match[]": "up", "password": "x"})
    result = types.CallToolResult(content=[types.TextContent(type="text", text="one"),
                                           types.ImageContent(type="image", data="AA==", mime_type="image/png")])
    assert result_text(result) == "one\n[image image/png]"
