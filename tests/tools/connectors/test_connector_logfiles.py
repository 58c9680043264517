"""Log-file connector: JSON lines, logfmt and plain text through DuckDB, with the six filters and a field map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evigate.errors import ConfigError
from evigate.tools.connectors import CONNECTORS, parse_sources

RECORDS = [
    {"ts": "2026-03-01T10:00:00Z", "svc": "ledger-api", "lvl": "info", "msg": "booked entry", "trace": "t1",
     "invoice": "INV-7"},
    {"ts": "2026-03-01T10:01:00Z", "svc": "ledger-api", "lvl": "error", "msg": "LEDGER_LOCK_TIMEOUT after 5000ms",
     "trace": "t2", "invoice": "INV-8"},
    {"ts": "2026-03-01T10:02:00Z", "svc": "invoice-worker", "lvl": "error", "msg": "retry budget exhausted",
     "trace": "t2", "invoice": "INV-8"},
    {"ts": "2026-03-01T11:30:00Z", "svc": "ledger-api", "lvl": "warn", "msg": "slow commit 900ms", "trace": "t3",
     "invoice": "INV-9"},
]
JSON_FIELDS = {"timestamp": "ts", "service": "svc", "level": "lvl", "message": "msg", "trace_id": "trace",
               "business_id": "invoice"}


def _tool(kind_settings: dict, base: Path, make_toolbox):
    sources = {"logs": {"kind": "logfiles", **kind_settings}}
    tools = [{"name": "search_logs", "description": "Search application logs.", "source": "logs"}]
    return make_toolbox(sources, tools, base)


@pytest.fixture()
def jsonl_dir(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_text("\n".join(json.dumps(r) for r in RECORDS[:2]) + "\n")
    (tmp_path / "logs" / "b.jsonl").write_text("\n".join(json.dumps(r) for r in RECORDS[2:]) + "\nnot json\n")
    return tmp_path


def test_jsonl_glob_with_field_map_and_every_filter(jsonl_dir: Path, make_toolbox) -> None:
    toolbox = _tool({"path": "logs/*.jsonl", "fields": JSON_FIELDS}, jsonl_dir, make_toolbox)
    everything = toolbox.call("search_logs")
    assert everything.success, everything.error
    assert "4 matching lines" in everything.output
    assert everything.output.splitlines()[1] == "2026-03-01T10:00:00Z info ledger-api trace=t1 id=INV-7 booked entry"
    errors = toolbox.call("search_logs", level="ERROR", trace_id="t2")
    assert "2 matching lines" in errors.output and "retry budget exhausted" in errors.output
    by_service = toolbox.call("search_logs", service="ledger-api", keyword="lock_timeout")
    assert by_service.retrieval_details["matched"] == 1
    window = toolbox.call("search_logs", start="2026-03-01T10:00:30Z", end="2026-03-01 10:05:00")
    assert window.retrieval_details["matched"] == 2
    by_invoice = toolbox.call("search_logs", business_id="INV-9")
    assert "slow commit 900ms" in by_invoice.output
    none = toolbox.call("search_logs", service="no-such-service")
    assert none.success and none.output.endswith(": no rows")
    limited = toolbox.call("search_logs", limit=1)
    assert "4 matching lines, first 1 shown" in limited.output and len(limited.output.splitlines()) == 2


def test_logfmt_and_plain_text(tmp_path: Path, make_toolbox) -> None:
    (tmp_path / "app.log").write_text(
        'ts=2026-03-01T10:01:00Z level=ERROR service=ledger-api msg="lock wait exceeded" trace_id=t9\n'
        "ts=2026-03-01T10:02:00Z level=INFO service=ledger-api msg=ok trace_id=t10\n")
    toolbox = _tool({"path": "app.log", "format": "logfmt", "fields": {"timestamp": "ts", "message": "msg"}},
                    tmp_path, make_toolbox)
    result = toolbox.call("search_logs", level="error")
    assert result.output.splitlines()[1] == "2026-03-01T10:01:00Z ERROR ledger-api trace=t9 lock wait exceeded"
    (tmp_path / "plain.log").write_text("2026-03-01 10:03:00 WARN invoice-worker queue depth 900\n"
                                        "garbage line\n")
    plain = _tool({"path": "plain.log", "format": "text"}, tmp_path, make_toolbox)
    text = plain.call("search_logs", keyword="queue")
    assert text.output.splitlines()[1] == "2026-03-01T10:03:00Z WARN invoice-worker queue depth 900"


def test_epoch_seconds_and_milliseconds_are_timestamps(tmp_path: Path, make_toolbox) -> None:
    (tmp_path / "epoch.jsonl").write_text('{"timestamp": 1772359260, "message": "seconds"}\n'
                                          '{"timestamp": 1772359320500, "message": "millis"}\n'
                                          '{"timestamp": "soon", "message": "no time"}\n')
    toolbox = _tool({"path": "epoch.jsonl"}, tmp_path, make_toolbox)
    lines = toolbox.call("search_logs", start="2026-03-01T10:00:30Z").output.splitlines()
    assert lines[1:] == ["2026-03-01T10:01:00Z - - seconds", "2026-03-01T10:02:00Z - - millis"]


def test_bad_arguments_and_missing_files_are_failed_invocations(jsonl_dir: Path, make_toolbox) -> None:
    toolbox = _tool({"path": "logs/*.jsonl", "fields": JSON_FIELDS}, jsonl_dir, make_toolbox)
    bad = toolbox.call("search_logs", start="yesterday-ish")
    assert not bad.success and "is not a time" in bad.error
    for path in jsonl_dir.glob("logs/*"):
        path.unlink()
    gone = toolbox.call("search_logs")
    assert not gone.success and "no log files match" in gone.error
    assert [row.success for row in toolbox.invocations()] == [False, False]


def test_config_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sources\.logs"):
        parse_sources({"logs": {"kind": "logfiles", "path": "x", "format": "text", "text_pattern": "(?P<a>.*)"}})
    [source] = parse_sources({"logs": {"kind": "logfiles", "path": "none/*.jsonl"}}).values()
    with pytest.raises(ConfigError, match=r"sources\.logs\.path: no log files match"):
        CONNECTORS["logfiles"].build_tools("logs", source, [], base_dir=tmp_path)
    check = CONNECTORS["logfiles"].check("logs", source, base_dir=tmp_path)
    assert not check.reachable


def test_check_counts_lines(jsonl_dir: Path) -> None:
    [source] = parse_sources({"logs": {"kind": "logfiles", "path": "logs/*.jsonl", "fields": JSON_FIELDS}}).values()
    check = CONNECTORS["logfiles"].check("logs", source, base_dir=jsonl_dir)
    assert check.reachable and check.seen == 4 and "2 files" in check.detail


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keyword=st.text(min_size=1, max_size=40))
@example(keyword="\x1f")  # found by hypothesis in CI: Python strips it, pydantic's str_strip_whitespace does not
def test_any_keyword_is_data_not_sql(keyword: str, jsonl_dir: Path, make_toolbox) -> None:
    toolbox = _tool({"path": "logs/*.jsonl", "fields": JSON_FIELDS}, jsonl_dir, make_toolbox)
    result = toolbox.call("search_logs", keyword=keyword)
    expected = sum(keyword.strip().lower() in r["msg"].lower() for r in RECORDS) if keyword.strip() else 4
    assert result.success, result.error
    assert result.retrieval_details["matched"] == expected
