"""The read-only SQL check and the `:name` rewriting, as invariants over generated text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.tools.connectors.sqlguard import UnsafeSQL, check_read_only, render_params

literal_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)
names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@given(st.text(max_size=200))
def test_any_text_is_either_a_single_read_or_refused_clearly(sql: str) -> None:
    try:
        params = check_read_only(sql)
    except UnsafeSQL as exc:
        assert str(exc)
    else:
        assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) for name in params)


@given(literal_text, names)
def test_string_literals_survive_rewriting_untouched(text: str, name: str) -> None:
    quoted = "'" + text.replace("'", "''") + "'"
    sql = f"SELECT {quoted} AS s, x::int FROM t WHERE a = :{name}"
    assert check_read_only(sql) == [name]
    assert render_params(sql, "duckdb") == f"SELECT {quoted} AS s, x::int FROM t WHERE a = ${name}"
    pyformat = render_params(sql, "pyformat")
    assert pyformat == f"SELECT {quoted.replace('%', '%%')} AS s, x::int FROM t WHERE a = %({name})s"


@given(st.sampled_from(["INSERT INTO t VALUES (1)", "UPDATE t SET a = 1", "DELETE FROM t", "DROP TABLE t",
                        "CREATE TABLE x (a int)", "TRUNCATE t", "GRANT ALL ON t TO x", "COPY t FROM '/etc/passwd'"]),
       st.sampled_from(["", "SELECT 1; ", "WITH x AS (SELECT 1) ", "/* ok */ "]))
def test_a_write_anywhere_is_refused(write: str, before: str) -> None:
    with pytest.raises(UnsafeSQL):
        check_read_only(before + write)


def test_escape_strings_cannot_hide_a_second_statement() -> None:
    with pytest.raises(UnsafeSQL):
        check_read_only("SELECT E'\\'' ; DELETE FROM t ; --'")
    assert check_read_only("SELECT E'it\\'s :not_a_param' FROM t WHERE a = :a") == ["a"]
