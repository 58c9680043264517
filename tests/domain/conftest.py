"""A fresh copy of the starter domain (`evigate domain init`) per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app

_register_commands()


@pytest.fixture()
def starter(tmp_path: Path) -> Path:
    directory = tmp_path / "acme"
    result = CliRunner().invoke(app, ["domain", "init", str(directory)])
    assert result.exit_code == 0, result.stdout
    return directory
