"""Issue 22 item 10: the Python API and `evigate ask` accept a question of at most MAX_QUERY_CHARS characters, as the
HTTP API does, with a clear QueryError (an EvigateError and a ValueError) and no session started."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app
from evigate.errors import EvigateError, QueryError
from evigate.modules.program import DiagnosisProgram
from evigate.signatures.query import MAX_QUERY_CHARS, check_query
from evigate.store import AuditStore
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier, v2

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"


def test_the_limit_counts_characters_and_names_itself() -> None:
    assert check_query("订" * MAX_QUERY_CHARS) == "订" * MAX_QUERY_CHARS  # 4,000 Chinese characters: 12 KB of UTF-8
    with pytest.raises(QueryError, match="4,001 characters long; at most 4,000"):
        check_query("订" * (MAX_QUERY_CHARS + 1))
    for bad in (None, 5, b"order 123", "  \n"):
        with pytest.raises(QueryError, match="non-empty string"):
            check_query(bad)
    assert issubclass(QueryError, EvigateError) and issubclass(QueryError, ValueError)


def test_the_python_api_refuses_a_long_question_before_any_session(world_db: Path) -> None:
    program = DiagnosisProgram.from_settings(
        database=world_db, planner=ScriptedPlanner(), executor=ScriptedExecutor(lambda results, _round: v2()),
        verifier=ScriptedVerifier({}), composer=ScriptedComposer(),
    )
    before = len(AuditStore(world_db).sessions(limit=1000))
    long_query = QUERY + " order 100000" * MAX_QUERY_CHARS
    with pytest.raises(QueryError, match="at most 4,000"):
        program(query=long_query)
    with pytest.raises(ValueError, match="characters long"):  # still a ValueError for callers that catch one
        program(query=long_query)
    assert len(AuditStore(world_db).sessions(limit=1000)) == before


def test_evigate_ask_refuses_a_long_question_with_exit_2(tmp_path: Path) -> None:
    _register_commands()
    database = tmp_path / "audit.duckdb"
    done = CliRunner().invoke(app, ["ask", "x" * (MAX_QUERY_CHARS + 1), "--database", str(database)])
    assert done.exit_code == 2, done.output
    assert "at most 4,000" in done.output and "Traceback" not in done.output
    assert not database.exists()  # refused before anything was built or opened


@pytest.mark.parametrize("query", ["\u200b\u200b\u200b", " \u3000\ufeff", "\u2800\u180e"])
def test_an_invisible_question_is_refused_by_the_python_api_as_by_the_http_api(query: str) -> None:
    with pytest.raises(QueryError):
        check_query(query)
