"""`evigate schema NAME`: print the JSON Schema of a contract."""

from __future__ import annotations

import json

import typer

from evigate.cli.app import app
from evigate.signatures import CONTRACTS


@app.command("schema")
def schema(name: str = typer.Argument(None, help="contract name, e.g. ExecutorOutputV2; omit to list them")) -> None:
    """Print the JSON Schema of a contract (or list contract names)."""
    if not name:
        for contract in sorted([*CONTRACTS, "Domain"]):
            typer.echo(contract)
        return
    from evigate.domain import Domain

    model = {**CONTRACTS, "Domain": Domain}.get(name)
    if model is None:
        typer.echo(f"unknown contract {name!r}; known: {', '.join(sorted(CONTRACTS))}", err=True)
        raise typer.Exit(2)
    typer.echo(json.dumps(model.model_json_schema(), ensure_ascii=False, indent=2))
