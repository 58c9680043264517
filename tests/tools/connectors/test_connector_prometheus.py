"""Prometheus connector against a real Prometheus loaded through `promtool tsdb create-blocks-from openmetrics`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from evigate.errors import ConfigError
from evigate.tools.connectors import CONNECTORS, parse_sources, parse_tools
from tests.servers import prometheus_server

pytestmark = pytest.mark.servers

def _sources(url: str) -> dict:
    return {"metrics": {"kind": "prometheus", "url": url, "timeout_s": 5}}


LATENCY = {
    "name": "service_latency", "description": "p99 latency of one service over a range.", "source": "metrics",
    "query": 'max by (service) (ledger_request_seconds_p99{service="$service"})', "threshold": 2.0, "unit": "s",
    "step": "1m", "params": {"service": {"type": "string", "description": "service name", "pattern": "^[a-z-]+$"}},
}


def test_range_query_summarises_min_max_last_and_threshold_crossing(prometheus: str, make_toolbox, tmp_path) -> None:
    toolbox = make_toolbox(_sources(prometheus), [LATENCY], tmp_path)
    result = toolbox.call("service_latency", service="ledger-api", start="2026-03-01T10:00:00Z",
                          end="2026-03-01T11:00:00Z")
    assert result.success, result.error
    header, line = result.output.splitlines()
    assert header == ('service_latency: query `max by (service) (ledger_request_seconds_p99{service="ledger-api"})` '
                      "from 2026-03-01T10:00:00Z to 2026-03-01T11:00:00Z step 1m: 1 series")
    assert line.startswith('{service="ledger-api"}: 61 points, min 0.2s at 2026-03-01T10:00:00Z, max 2.79s at '
                           "2026-03-01T10:29:00Z, last 0.2s at 2026-03-01T11:00:00Z")
    assert line.endswith("above 2s from 2026-03-01T10:20:00Z to 2026-03-01T10:29:00Z (10 points)")
    [summary] = result.retrieval_details["summaries"]
    assert summary["first_crossed_at"] == "2026-03-01T10:20:00Z" and summary["crossings"] == 1
    quiet = toolbox.call("service_latency", service="invoice-worker", start="2026-03-01T10:00:00Z",
                         end="2026-03-01T11:00:00Z")
    assert "never above 2s" in quiet.output
    # the healthy reading says so in its details, for the claim rules (a reading within threshold is no symptom)
    assert quiet.retrieval_details["within_threshold"] is True
    assert result.retrieval_details["within_threshold"] is False


def test_default_window_ends_at_the_domains_clock(prometheus: str, make_toolbox, tmp_path) -> None:
    frozen = make_toolbox(_sources(prometheus), [{**LATENCY, "window": "30m"}], tmp_path,
                          clock=lambda: datetime(2026, 3, 1, 10, 40))
    result = frozen.call("service_latency", service="ledger-api")
    assert "from 2026-03-01T10:10:00Z to 2026-03-01T10:40:00Z step 1m: 1 series" in result.output
    relative = frozen.call("service_latency", service="ledger-api", start="now-10m")
    assert "from 2026-03-01T10:30:00Z to 2026-03-01T10:40:00Z" in relative.output


def test_instant_query_and_window_variable(prometheus: str, make_toolbox, tmp_path) -> None:
    tool = {"name": "peak_latency", "description": "Highest p99 over the window, per service.", "source": "metrics",
            "mode": "instant", "window": "1h", "query": "max_over_time(ledger_request_seconds_p99[$window])"}
    toolbox = make_toolbox(_sources(prometheus), [tool], tmp_path)
    result = toolbox.call("peak_latency", time="2026-03-01T11:00:00Z")
    assert result.success, result.error
    assert "query `max_over_time(ledger_request_seconds_p99[1h])` at 2026-03-01T11:00:00Z: 2 series" in result.output
    assert result.output.splitlines()[1:] == ['{service="invoice-worker"}: 0.24 at 2026-03-01T11:00:00Z',
                                              '{service="ledger-api"}: 2.79 at 2026-03-01T11:00:00Z']


def test_injection_is_escaped_and_errors_are_failed_invocations(prometheus: str, make_toolbox, tmp_path) -> None:
    loose = {**LATENCY, "params": {"service": {"type": "string"}}}
    toolbox = make_toolbox(_sources(prometheus), [loose], tmp_path)
    sneaky = toolbox.call("service_latency", service='x"} or vector(1) or {a="', start="2026-03-01T10:00:00Z",
                          end="2026-03-01T11:00:00Z")
    assert sneaky.success and sneaky.output.endswith("no rows (no series matched)")
    backwards = toolbox.call("service_latency", service="ledger-api", start="2026-03-01T11:00:00Z",
                             end="2026-03-01T10:00:00Z")
    assert not backwards.success and "is not after start" in backwards.error
    bad = make_toolbox(_sources(prometheus), [{**LATENCY, "name": "broken", "query": "rate(]"}], tmp_path)
    failed = bad.call("broken", service="ledger-api")
    assert not failed.success and "prometheus bad_data" in failed.error
    strict = make_toolbox(_sources(prometheus), [LATENCY], tmp_path)
    refused = strict.call("service_latency", service='x"}')
    assert not refused.success and "should match pattern" in refused.error


def test_unreachable_server_and_bad_templates(tmp_path: Path, make_toolbox) -> None:
    from tests.servers import free_port

    sources = {"metrics": {"kind": "prometheus", "url": f"http://127.0.0.1:{free_port()}", "timeout_s": 2}}
    toolbox = make_toolbox(sources, [LATENCY], tmp_path)
    down = toolbox.call("service_latency", service="ledger-api")
    assert not down.success and "unreachable" in down.error
    [source] = parse_sources(sources).values()
    assert not CONNECTORS["prometheus"].check("metrics", source, base_dir=tmp_path).reachable
    with pytest.raises(ConfigError, match=r"tools\.service_latency\.query|\$region"):
        parse_tools([{**LATENCY, "query": 'up{region="$region"}'}], parse_sources(sources))
    with pytest.raises(ConfigError, match="reserved"):
        parse_tools([{**LATENCY, "params": {"step": {"type": "string"}}}], parse_sources(sources))


def test_check_counts_metric_names(prometheus: str, tmp_path: Path) -> None:
    [source] = parse_sources(_sources(prometheus)).values()
    check = CONNECTORS["prometheus"].check("metrics", source, base_dir=tmp_path)
    assert check.reachable and check.seen == 1 and check.latency_ms is not None



def test_basic_auth_password_comes_from_the_environment(tmp_path: Path, make_toolbox, monkeypatch) -> None:
    series = "# TYPE queue_depth gauge\nqueue_depth 7 1772359200\nqueue_depth 9 1772359260\n# EOF\n"
    with prometheus_server(series, tmp_path / "auth", basic_auth=("evigate", "pr0m-secret")) as url:
        sources = {"metrics": {"kind": "prometheus", "url": url, "username": "evigate",
                               "password_env": "ACME_PROM_PASSWORD", "timeout_s": 5}}
        tool = {"name": "queue", "description": "Queue depth.", "source": "metrics", "mode": "instant",
                "query": "queue_depth"}
        toolbox = make_toolbox(sources, [tool], tmp_path)
        monkeypatch.delenv("ACME_PROM_PASSWORD", raising=False)
        unset = toolbox.call("queue", time="2026-03-01T10:01:00Z")
        assert not unset.success and "environment variable ACME_PROM_PASSWORD is not set" in unset.error
        monkeypatch.setenv("ACME_PROM_PASSWORD", "wrong")
        refused = toolbox.call("queue", time="2026-03-01T10:01:00Z")
        assert not refused.success and "refused the credentials (HTTP 401); check ACME_PROM_PASSWORD" in refused.error
        monkeypatch.setenv("ACME_PROM_PASSWORD", "pr0m-secret")
        answered = toolbox.call("queue", time="2026-03-01T10:01:00Z")
        assert answered.success and answered.output.endswith("queue_depth: 9 at 2026-03-01T10:01:00Z")
        assert all("pr0m-secret" not in row.model_dump_json() for row in toolbox.invocations())
