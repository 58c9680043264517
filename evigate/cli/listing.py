"""``evigate show --list``: past sessions, filtered and paginated, newest first (what ``GET /v1/sessions`` runs)."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from evigate.cli.terminal import plain


def print_sessions(console: Console, page: dict[str, Any], as_json: bool) -> None:
    """One page of :meth:`AuditStore.find_sessions`, as JSON or as a table (data only through ``plain``)."""
    if as_json:
        typer.echo(json.dumps(page, ensure_ascii=False, indent=2, default=str))
        return
    table = Table(title=f"{page['total']} session(s), newest first")
    table.add_column("created (UTC)")
    table.add_column("session", overflow="fold", min_width=32)  # whole: it is what `evigate show` takes
    for column in ("verdict", "output type", "status", "question"):
        table.add_column(column)
    for row in page["sessions"]:
        created = row.get("created_at")
        table.add_row(
            plain(created.isoformat(sep=" ", timespec="seconds") if hasattr(created, "isoformat") else created),
            plain(row.get("session_id")), plain(row.get("verdict") or "—"), plain(row.get("output_type") or "—"),
            plain(row.get("status")), plain(row.get("query"), 80),
        )
    console.print(table)
    shown_to = page["offset"] + len(page["sessions"])
    if shown_to < page["total"]:
        console.print(f"showing {page['offset'] + 1}–{shown_to}; next page: --offset {shown_to}")
