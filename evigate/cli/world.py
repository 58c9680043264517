"""`evigate world init|stats`: build and inspect the demo incident world in the DuckDB file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from evigate.cli.app import app
from evigate.demo import DEFAULT_SEED, build_world, world_info, world_stats
from evigate.errors import ConfigError, StoreError

DEFAULT_DATABASE = "evigate.duckdb"
DATABASE_ENV = "EVIGATE_DATABASE"

world_app = typer.Typer(
    name="world",
    help="The demo incident world: a payment platform's day (2026-11-28) with seven incidents.",
    no_args_is_help=True,
)
app.add_typer(world_app, name="world")

DATABASE_OPTION = typer.Option(
    None, "--database", "-d", help=f"DuckDB file [default: ./{DEFAULT_DATABASE}, or ${DATABASE_ENV}]",
    show_default=False,
)


def resolve_database(option: str | Path | None) -> Path:
    """--database, else $EVIGATE_DATABASE, else ./evigate.duckdb.

    With a server audit store (a postgresql:// URL) each worker builds the demo world in its own memory on first
    use, so there is no file to build or count: that is a ConfigError saying so."""
    chosen = str(option) if option else os.environ.get(DATABASE_ENV) or DEFAULT_DATABASE
    if "://" in chosen:
        raise ConfigError(
            "the audit store is a server URL: each evigate worker builds the demo world in its own memory on first "
            "use; give --database a DuckDB file to build or inspect a world there"
        )
    return Path(chosen)


def _counts_table(title: str, counts: dict[str, int]) -> Table:
    table = Table(title=title)
    table.add_column("table")
    table.add_column("rows", justify="right")
    for name, count in counts.items():
        table.add_row(name, f"{count:,}")
    return table


@world_app.command("init")
def init(
    database: str | None = DATABASE_OPTION,
    seed: int = typer.Option(DEFAULT_SEED, help="generator seed; the same seed gives the same world"),
    scale: float = typer.Option(1.0, min=0.01, max=20.0, help="order volume factor (1.0 = the full demo world)"),
) -> None:
    """Build (or rebuild) the world_* tables; the audit tables are left alone."""
    from evigate.store import AuditStore

    path = resolve_database(database)
    console = Console()
    started = time.perf_counter()
    try:
        with AuditStore(path) as store, store.cursor() as cursor:
            counts = build_world(cursor, seed=seed, scale=scale)
    except StoreError as exc:
        console.print(f"[red]cannot build the world:[/red] {exc}")
        raise typer.Exit(1) from None
    elapsed = time.perf_counter() - started
    console.print(_counts_table(f"world built in {path} (seed {seed}, scale {scale:g})", counts))
    console.print(f"build time: {elapsed:.2f} s")


@world_app.command("stats")
def stats(database: str | None = DATABASE_OPTION) -> None:
    """Row counts, generator version and the incidents of the world in the database."""
    from evigate.store import AuditStore

    path = resolve_database(database)
    console = Console()
    if not path.exists():
        console.print(f"[red]no database at {path}[/red]; run `evigate world init`")
        raise typer.Exit(1)
    try:
        with AuditStore(path, read_only=True) as store, store.cursor() as cursor:
            info = world_info(cursor)
            counts = world_stats(cursor)
            incidents = cursor.execute(
                "SELECT incident_id, strftime(start_ts, '%H:%M') || '-' || strftime(end_ts, '%H:%M'), service, "
                "error_code, title FROM world_incidents ORDER BY start_ts").fetchall() if info else []
    except StoreError as exc:
        console.print(f"[red]cannot read {path}:[/red] {exc}")
        raise typer.Exit(1) from None
    if not info:
        console.print(f"no world in {path}; run `evigate world init`")
        raise typer.Exit(1)
    console.print(_counts_table(f"world in {path}", counts))
    console.print("  ".join(f"{key}={value}" for key, value in sorted(info.items())))
    table = Table(title="incidents")
    for column in ("id", "time", "service", "error_code", "title"):
        table.add_column(column)
    for row in incidents:
        table.add_row(*(str(value) for value in row))
    console.print(table)
