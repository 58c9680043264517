"""Root Typer app; command modules are imported for their registration side effect."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="evigate",
    help="Answer incident questions with evidence-gated LLM agents; every answer traces back to tool calls.",
    no_args_is_help=True,
    add_completion=False,
)

COMMAND_MODULES = (
    "evigate.cli.diagnose",  # ask, show
    "evigate.cli.schema",  # schema
    "evigate.cli.world",  # world init / world stats
    "evigate.cli.optimize",  # eval, optimize, ui
    "evigate.cli.verify",  # verify
)


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a command group not built yet must not break the others
            if exc.name != name:
                raise


def main() -> None:
    """Console-script entry point."""
    _register_commands()
    app()
