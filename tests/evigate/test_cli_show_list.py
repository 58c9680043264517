"""`evigate show --list`: past sessions with the filters of GET /v1/sessions (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evigate.cli.app import app
from evigate.store import AuditStore
from tests.evigate.test_cli import runner


def run_cli(*args: str, database: Path) -> Any:
    """In process (a subprocess per call costs seconds): the result has ``exit_code`` and ``stdout``."""
    return runner.invoke(app, ["show", *args, "--database", str(database)])


def _record(database: Path) -> list[str]:
    ids = []
    with AuditStore(database) as store:
        for query, verdict, output_type in (("订单 123 支付失败？", "PASS", "NORMAL"),
                                             ("checkout slow?", "REJECT", "DEGRADED")):
            session_id = store.start_session(query)
            store.finish_session(session_id, output_type=output_type, verdict=verdict, answer="…", rounds=1,
                                 groundedness_score=0.5)
            ids.append(session_id)
    return ids


def test_show_list_filters_and_prints_json_or_a_table(tmp_path: Path) -> None:
    database = tmp_path / "audit.duckdb"
    first, second = _record(database)
    listed = json.loads(run_cli("--list", "--json", database=database).stdout)
    assert [row["session_id"] for row in listed["sessions"]] == [second, first] and listed["total"] == 2
    rejected = json.loads(run_cli("--list", "--json", "--verdict", "REJECT", database=database).stdout)
    assert [row["session_id"] for row in rejected["sessions"]] == [second]
    text = json.loads(run_cli("--list", "--json", "--text", "支付", database=database).stdout)
    assert [row["session_id"] for row in text["sessions"]] == [first]
    paged = json.loads(run_cli("--list", "--json", "--limit", "1", "--offset", "1", database=database).stdout)
    assert [row["session_id"] for row in paged["sessions"]] == [first]
    table = run_cli("--list", database=database)
    assert table.exit_code == 0 and first in table.stdout and second in table.stdout  # whole ids, to copy


def test_show_list_refuses_bad_filters_and_ambiguous_use_clearly(tmp_path: Path) -> None:
    database = tmp_path / "audit.duckdb"
    [first, _] = _record(database)
    for args in (("--list", "--verdict", "pass"), ("--list", "--since", "yesterday"), ("--list", "--limit", "0"),
                 (first, "--list"), ()):
        shown = run_cli(*args, database=database)
        assert shown.exit_code == 2 and isinstance(shown.exception, SystemExit | None), args
        assert shown.stdout.strip() and "Traceback" not in shown.stdout
