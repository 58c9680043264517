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


# Functions that read the server's or the process's files whatever the statement looks like: PostgreSQL's (refused
# always: a declared query has no business reading the database host's files) and DuckDB's file readers, whose
# path arguments `file_paths` returns so the connector can confine them to the domain directory.
SERVER_FILE_FUNCTIONS = frozenset({
    "PG_READ_FILE", "PG_READ_BINARY_FILE", "PG_LS_DIR", "PG_STAT_FILE", "PG_LS_LOGDIR", "PG_LS_WALDIR",
    "PG_LS_TMPDIR", "PG_LS_ARCHIVE_STATUSDIR", "LO_IMPORT", "LO_EXPORT", "LO_GET", "DBLINK", "DBLINK_EXEC",
})
FILE_FUNCTIONS = frozenset({
    "READ_TEXT", "READ_BLOB", "READ_CSV", "READ_CSV_AUTO", "SNIFF_CSV", "READ_PARQUET", "PARQUET_SCAN",
    "PARQUET_METADATA", "PARQUET_SCHEMA", "PARQUET_FILE_METADATA", "PARQUET_KV_METADATA", "READ_JSON",
    "READ_JSON_AUTO", "READ_JSON_OBJECTS", "READ_JSON_OBJECTS_AUTO", "READ_NDJSON", "READ_NDJSON_AUTO",
    "READ_NDJSON_OBJECTS", "JSON_SCAN", "GLOB", "READ_XLSX", "READ_DUCKDB", "ICEBERG_SCAN", "DELTA_SCAN",
    "ST_READ",
})
_CALL_OPEN = re.compile(r"\s*\(\s*(\[\s*)?$")
_LIST_NEXT = re.compile(r"\s*,\s*$")
_ARG_END = re.compile(r"\s*[,)]")
_LIST_END = re.compile(r"\s*\]\s*[,)]")


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
    server_files = sorted(SERVER_FILE_FUNCTIONS.intersection(words))
    if server_files:
        raise UnsafeSQL(f"the query uses {', '.join(server_files).lower()}: reading the server's files is not allowed")
    file_paths(sql)  # a file reader whose path is not a literal cannot be confined: refused here
    return list(dict.fromkeys(params))


def _literal(token: re.Match[str]) -> str:
    text = token.group(0)
    if token.lastgroup == "ident":
        return text[1:-1].replace('""', '"')
    if token.lastgroup == "estring":
        return text[2:-1].replace("''", "'")
    return text[1:-1].replace("''", "'")


def file_paths(sql: str) -> list[str]:
    """The files a DuckDB statement reads by itself: the path arguments of its file-reading table functions
    (`read_text('/etc/passwd')`, `read_csv(['a.csv', 'b.csv'])`, `glob('*')`) and the files it scans by name
    (`FROM 'x.csv'`, `FROM "x.parquet"`). UnsafeSQL when such a function takes its path from anything but string
    literals (a parameter, an expression): that path could not be checked before the query runs."""
    tokens = [match for match in _TOKEN.finditer(sql) if match.lastgroup not in {"line_comment", "block_comment"}]
    paths: list[str] = []
    for index, token in enumerate(tokens):
        if token.lastgroup == "word" and token.group(0).upper() in FILE_FUNCTIONS:
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            end = following.start() if following is not None else len(sql)
            opened = _CALL_OPEN.match(sql[token.end():end])
            if opened is None:
                if re.match(r"\s*\(", sql[token.end():]):
                    raise UnsafeSQL(f"{token.group(0)}(...) must name its file as a string literal, so that the "
                                    "file can be checked against the domain directory before the query runs")
                continue  # the word as a column or alias name, not a call
            if following is None or following.lastgroup not in {"string", "estring"}:
                raise UnsafeSQL(f"{token.group(0)}(...) must name its file as a string literal, so that the file "
                                "can be checked against the domain directory before the query runs")
            paths.append(_literal(following))
            position = index + 2
            if opened.group(1):  # a list: every element a literal
                while position < len(tokens) and _LIST_NEXT.match(sql[tokens[position - 1].end():
                                                                     tokens[position].start()]):
                    if tokens[position].lastgroup not in {"string", "estring"}:
                        raise UnsafeSQL(f"{token.group(0)}([...]) must list its files as string literals")
                    paths.append(_literal(tokens[position]))
                    position += 1
            after = sql[tokens[position - 1].end():tokens[position].start() if position < len(tokens) else len(sql)]
            if not (_LIST_END if opened.group(1) else _ARG_END).match(after):  # 'a' || 'b', ['a'] || x: computed
                raise UnsafeSQL(f"{token.group(0)}(...) must name its file as a string literal, so that the file "
                                "can be checked against the domain directory before the query runs")
        elif token.lastgroup in {"string", "estring", "ident"} and index > 0:
            before = tokens[index - 1]
            gap = sql[before.end():token.start()]
            scanned = before.lastgroup == "word" and before.group(0).upper() in {"FROM", "JOIN"} and not gap.strip()
            if scanned and (token.lastgroup != "ident" or re.search(r"[./\\]", token.group(0))):
                paths.append(_literal(token))
    return paths


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
