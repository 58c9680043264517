"""Read-only SQL, checked before anything runs: one statement, reading only, with `:name` parameters.

This is the config-time half of the guarantee; the connectors also run every query in a read-only
transaction (PostgreSQL) or on a read-only connection (DuckDB), so a statement that slips past the check
still cannot write.
"""

from __future__ import annotations

import re

# Escape strings (E'\\''), strings, quoted identifiers, comments, dollar-quoted bodies, `::` casts, `:name`
# parameters, words, `;`.
_TOKEN = re.compile(
    r"(?P<estring>(?<![A-Za-z0-9_])[Ee]'(?:[^'\\]|\\.|'')*')|(?P<string>'(?:[^']|'')*')"
    r"|(?P<ident>\"(?:[^\"]|\"\")*\")|(?P<line_comment>--[^\n]*)"
    r"|(?P<block_comment>/\*.*?\*/)|(?P<dollar>\$(?P<tag>[A-Za-z_]*)\$.*?\$(?P=tag)\$)|(?P<cast>::)"
    r"|(?P<param>(?<![:\w]):(?P<name>[A-Za-z_][A-Za-z0-9_]*))|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<semi>;)"
    r"|(?P<percent>%)",
    re.DOTALL,
)
READ_STARTS = frozenset({"SELECT", "WITH", "VALUES", "TABLE"})
# Statements other than SELECT/WITH/VALUES/TABLE are refused by their first word; these are the words that can
# make a query that starts like a read write or lock (data-modifying CTEs, SELECT INTO, FOR UPDATE) or reach
# outside the database (DuckDB's ATTACH/INSTALL/LOAD/COPY).
WRITE_WORDS = frozenset({
    "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "INTO", "COPY", "CREATE", "DROP", "ALTER", "TRUNCATE",
    "GRANT", "REVOKE", "ATTACH", "DETACH", "INSTALL", "LOAD", "EXPORT", "IMPORT", "PRAGMA", "CALL", "SET",
    "RESET", "CHECKPOINT", "VACUUM",
})


class UnsafeSQL(ValueError):
    """The statement is not a single read-only query."""


def check_read_only(sql: str) -> list[str]:
    """The `:name` parameters of a single read-only statement, in order of first use; UnsafeSQL otherwise."""
    words: list[str] = []
    params: list[str] = []
    statements_done = False
    position = 0
    for match in _TOKEN.finditer(sql):
        gap = sql[position:match.start()]
        position = match.end()
        if statements_done and (gap.strip() or match.lastgroup not in {"line_comment", "block_comment", "semi"}):
            raise UnsafeSQL("only one statement is allowed (found text after ';')")
        if "'" in gap or '"' in gap:
            raise UnsafeSQL("unterminated quoted string")
        kind = match.lastgroup
        if kind == "word":
            words.append(match.group("word").upper())
        elif kind == "param":
            params.append(match.group("name"))
        elif kind == "semi":
            statements_done = True
        elif kind == "dollar":
            raise UnsafeSQL("dollar-quoted bodies are not allowed in a read-only query")
    tail = sql[position:]
    if "'" in tail or '"' in tail:
        raise UnsafeSQL("unterminated quoted string")
    if not words:
        raise UnsafeSQL("empty statement")
    if words[0] not in READ_STARTS:
        raise UnsafeSQL(f"a read-only query starts with SELECT, WITH, VALUES or TABLE, not {words[0]}")
    writes = sorted(WRITE_WORDS.intersection(words))
    if writes:
        raise UnsafeSQL(f"the query uses {', '.join(writes)}: only reading queries are allowed")
    return list(dict.fromkeys(params))


def render_params(sql: str, style: str) -> str:
    """`:name` → `%(name)s` (psycopg; literal `%` doubled) or `$name` (DuckDB), leaving strings and casts alone."""
    out: list[str] = []
    position = 0
    for match in _TOKEN.finditer(sql):
        out.append(sql[position:match.start()])
        position = match.end()
        text = match.group(0)
        if match.lastgroup == "param":
            text = f"%({match.group('name')})s" if style == "pyformat" else f"${match.group('name')}"
        elif style == "pyformat" and "%" in text:
            text = text.replace("%", "%%")
        out.append(text)
    out.append(sql[position:])
    return "".join(out).rstrip().rstrip(";")
