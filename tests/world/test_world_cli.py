"""`evigate world init|stats` on a temporary database."""

from __future__ import annotations

from typer.testing import CliRunner

import evigate.cli.world  # noqa: F401  (registers the world sub-app)
from evigate.cli.app import app
from evigate.demo import world_info
from evigate.store import AuditStore

runner = CliRunner()


def test_init_then_stats(tmp_path) -> None:
    path = tmp_path / "cli.duckdb"
    result = runner.invoke(app, ["world", "init", "--database", str(path), "--scale", "0.05", "--seed", "11"])
    assert result.exit_code == 0, result.output
    assert "world_logs" in result.output and "build time" in result.output
    with AuditStore(path, read_only=True) as store, store.cursor() as cursor:
        assert world_info(cursor)["seed"] == "11"
    stats = runner.invoke(app, ["world", "stats", "--database", str(path)])
    assert stats.exit_code == 0, stats.output
    assert "world_orders" in stats.output and "ERR_TIMEOUT" in stats.output


def test_database_from_environment(tmp_path) -> None:
    path = tmp_path / "env.duckdb"
    result = runner.invoke(app, ["world", "init", "--scale", "0.05"], env={"EVIGATE_DATABASE": str(path)})
    assert result.exit_code == 0, result.output
    assert path.exists()


def test_stats_without_a_database_fails_cleanly(tmp_path) -> None:
    result = runner.invoke(app, ["world", "stats", "--database", str(tmp_path / "missing.duckdb")])
    assert result.exit_code == 1
    assert "evigate world init" in result.output


def test_stats_without_a_world_fails_cleanly(tmp_path) -> None:
    path = tmp_path / "empty.duckdb"
    AuditStore(path).close()
    result = runner.invoke(app, ["world", "stats", "--database", str(path)])
    assert result.exit_code == 1
    assert "no world" in result.output
