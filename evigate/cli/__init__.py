"""The `evigate` command line. Each command group lives in its own module and registers on `app`."""

from __future__ import annotations

from evigate.cli.app import app, main

__all__ = ["app", "main"]
