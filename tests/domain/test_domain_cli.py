"""`evigate domain init` writes a domain that `evigate domain check` passes; every problem names file and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evigate.cli.app import app

runner = CliRunner()


def check(directory: Path):
    return runner.invoke(app, ["domain", "check", str(directory)])


def test_starter_domain_checks_clean(starter: Path) -> None:
    result = check(starter)
    assert result.exit_code == 0, result.stdout
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()}
    assert set(rows) == {"app_logs", "runbooks"}
    assert "logfiles" in rows["app_logs"] and "yes" in rows["app_logs"] and " 7 " in rows["app_logs"]
    assert "knowledge" in rows["runbooks"] and " 2 " in rows["runbooks"]


def test_init_refuses_a_folder_with_files(starter: Path) -> None:
    result = runner.invoke(app, ["domain", "init", str(starter)])
    assert result.exit_code == 2 and "not an empty folder" in result.stdout


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace("    path: logs/*.jsonl", "    pathh: logs/*.jsonl"), "sources.app_logs.pathh"),
        (lambda t: t.replace("kind: logfiles", "kind: splunk"), "sources.app_logs.kind"),
        (lambda t: t.replace("    source: app_logs", "    source: nowhere"), "tools.search_logs.source"),
        (lambda t: t.replace("    path: knowledge", "    path: no-such-folder"), "sources.runbooks.path"),
        (lambda t: t.replace('error_code_pattern: "(E_[A-Z0-9_]+)"', 'error_code_pattern: "(E_["'),
         "vocabulary.error_code_pattern"),
        (lambda t: t + "\n  oops: [\n", "not valid YAML"),
    ],
)
def test_a_broken_domain_yaml_names_the_file_and_key(starter: Path, edit, expected: str) -> None:
    config = starter / "domain.yaml"
    config.write_text(edit(config.read_text(encoding="utf-8")), encoding="utf-8")
    result = check(starter)
    assert result.exit_code != 0
    assert "domain.yaml" in result.stdout and expected in result.stdout
    assert "Traceback" not in result.stdout


def test_a_skill_naming_an_unknown_tool_is_reported(starter: Path) -> None:
    skill = starter / "skills" / "checkout-failure.yaml"
    skill.write_text(skill.read_text(encoding="utf-8").replace("tool: search_logs", "tool: search_logz"), "utf-8")
    result = check(starter)
    assert result.exit_code != 0 and "checkout-failure.yaml" in result.stdout and "steps[0].tool" in result.stdout


def test_an_unreachable_source_fails_the_check(starter: Path) -> None:
    (starter / "logs" / "app.jsonl").unlink()
    result = check(starter)
    assert result.exit_code != 0
    assert "domain.yaml: sources.app_logs.path" in result.stdout and "no log files match" in result.stdout


def test_schema_prints_the_domain_model() -> None:
    result = runner.invoke(app, ["schema", "Domain"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert {"vocabulary", "skills", "sources", "tools", "knowledge"} <= set(schema["properties"])


def test_a_source_that_answers_nothing_fails_the_check(starter: Path) -> None:
    for document in (starter / "knowledge").rglob("*.md"):
        document.unlink()
    result = check(starter)
    assert result.exit_code == 1
    assert "domain.yaml: sources.runbooks: not reachable" in result.stdout


def test_ask_on_a_broken_domain_is_one_clear_error(starter: Path, tmp_path: Path) -> None:
    config = starter / "domain.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("kind: logfiles", "kind: splunk"), "utf-8")
    result = runner.invoke(app, ["ask", "why did order 1001 fail?", "--domain", str(starter),
                                 "--database", str(tmp_path / "a.duckdb")])
    assert result.exit_code == 2
    assert "domain.yaml" in result.stdout and "sources.app_logs.kind" in result.stdout
    assert "Traceback" not in result.stdout


def test_world_commands_refuse_a_server_audit_store_clearly(monkeypatch, tmp_path: Path) -> None:
    """With a PostgreSQL audit store each worker keeps the demo world in memory: no file to build, said plainly."""
    import pytest

    from evigate.cli.world import resolve_database
    from evigate.errors import ConfigError

    monkeypatch.setenv("EVIGATE_DATABASE", "postgresql://evigate@127.0.0.1:5432/evigate")
    with pytest.raises(ConfigError, match="in its own memory"):
        resolve_database(None)
    assert resolve_database(tmp_path / "x.duckdb") == tmp_path / "x.duckdb"
