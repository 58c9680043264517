"""`evigate domain init DIR` (a starter domain that works as written) and `evigate domain check DIR`."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from evigate.cli.app import app
from evigate.cli.terminal import safe_markup

domain_app = typer.Typer(
    name="domain",
    help="Your own incident domain: vocabulary, skills, knowledge, data sources and the tools over them.",
    no_args_is_help=True,
)
app.add_typer(domain_app, name="domain")
console = Console()


def starter_dir() -> Path:
    """The starter domain shipped with evigate (what `domain init` copies)."""
    return Path(str(resources.files("evigate.domain") / "starter"))


@domain_app.command("init")
def init(
    directory: Path = typer.Argument(..., help="folder to create (must not exist, or be empty)"),
) -> None:
    """Write a commented starter domain (JSONL logs + Markdown runbooks + skills) that runs with no server."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        console.print(f"[red]error:[/red] {safe_markup(str(directory))} exists and is not an empty folder; "
                      "choose a new one")
        raise typer.Exit(2)
    shutil.copytree(starter_dir(), directory, dirs_exist_ok=True)
    files = sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())
    console.print(f"starter domain written to {safe_markup(str(directory))}:", highlight=False, soft_wrap=True)
    for name in files:
        console.print(f"  {safe_markup(name)}", highlight=False, soft_wrap=True)
    console.print(f"next: evigate domain check {safe_markup(str(directory))}", highlight=False, soft_wrap=True)


@domain_app.command("check")
def check(
    directory: Path = typer.Argument(..., help="a domain folder holding domain.yaml"),
) -> None:
    """Validate the domain and connect to every source: one row per source; non-zero exit on any problem."""
    from evigate.domain import load_domain_dir
    from evigate.errors import EvigateError

    try:
        domain = load_domain_dir(directory)
    except EvigateError as exc:
        console.print(f"[red]error:[/red] {safe_markup(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    checks = domain.check_sources()
    table = Table(title=f"domain {safe_markup(domain.name)}: {len(domain.skills)} skills, {len(domain.tools)} tools")
    for column, justify in (("source", "left"), ("kind", "left"), ("reachable", "left"), ("seen", "right"),
                            ("latency ms", "right"), ("detail", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for item in checks:
        table.add_row(safe_markup(item.source), item.kind, "yes" if item.reachable else "[red]NO[/red]",
                      "-" if item.seen is None else f"{item.seen:,}",
                      "-" if item.latency_ms is None else f"{item.latency_ms:.1f}", safe_markup(item.detail))
    console.print(table)
    config = Path(directory) / "domain.yaml"
    problems = []
    for item in checks:
        if not item.reachable:
            problems.append(f"{config}: sources.{item.source}: not reachable: {item.detail}")
    for problem in problems:
        console.print(f"[red]error:[/red] {safe_markup(problem)}", highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(1)
    console.print(f"ok: {safe_markup(str(directory))} is ready (evigate ask --domain {safe_markup(str(directory))} …)",
                  highlight=False, soft_wrap=True)
