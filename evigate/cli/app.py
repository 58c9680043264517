"""Root Typer app; command modules are imported for their registration side effect.

Every failure ends as one line on stderr and an exit code, never a traceback: typer's pretty exceptions are off
(they print local variables, which hold the settings), and :func:`main` turns what escapes a command into a
message. ``EVIGATE_DEBUG=1`` re-raises for a developer who wants the traceback.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

app = typer.Typer(
    name="evigate",
    help="Answer incident questions with evidence-gated LLM agents; every answer traces back to tool calls.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
)

COMMAND_MODULES = (
    "evigate.cli.diagnose",  # ask, show
    "evigate.cli.schema",  # schema
    "evigate.cli.world",  # world init / world stats
    "evigate.cli.domain",  # domain init / domain check
    "evigate.cli.optimize",  # eval, optimize, ui
    "evigate.cli.label",  # label
    "evigate.cli.serve",  # serve
    "evigate.cli.verify",  # verify
)

EXIT_ERROR = 2  # a product error: configuration, store, model
EXIT_INTERNAL = 1  # a bug: reported in one line, never as a traceback
EXIT_INTERRUPTED = 130


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    from rich.console import Console

    from evigate.cli.terminal import print_error
    from evigate.errors import EvigateError

    err = Console(stderr=True)
    try:
        _register_commands()
        app(args=argv, prog_name="evigate")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print_error(err, "interrupted")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        if os.environ.get("EVIGATE_DEBUG") == "1":
            raise
        if isinstance(exc, EvigateError):
            print_error(err, exc)
            sys.exit(EXIT_ERROR)
        if isinstance(exc, OSError):
            where = f": {exc.filename}" if exc.filename else ""
            print_error(err, f"{exc.strerror or type(exc).__name__}{where}")
            sys.exit(EXIT_ERROR)
        print_error(err, f"internal error ({type(exc).__name__}: {_first_line(exc)}); rerun with EVIGATE_DEBUG=1")
        sys.exit(EXIT_INTERNAL)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else ""
