"""The command line: schema, show (the whole audit chain), and clear errors instead of tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app
from evigate.modules.program import DiagnosisProgram
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
from tests.modules.test_program_routing import QUERY, good_claims

EVIGATE = [sys.executable, "-m", "evigate.cli"]
_register_commands()
runner = CliRunner()


def run_cli(*args: str, database: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVIGATE_DATABASE": str(database)}
    return subprocess.run([*EVIGATE, *args], capture_output=True, text=True, env=env, timeout=120)


def test_schema_lists_and_prints_contracts() -> None:
    listing = runner.invoke(app, ["schema"])
    assert listing.exit_code == 0 and "ExecutorOutputV2" in listing.stdout.split()
    schema = json.loads(runner.invoke(app, ["schema", "ComposerOutput"]).stdout)
    assert set(schema["required"]) == {"answer_summary", "user_facing_answer"}
    unknown = runner.invoke(app, ["schema", "Nope"])
    assert unknown.exit_code == 2


def test_show_prints_the_chain_from_answer_to_tool_invocations(private_world: Path) -> None:
    program = DiagnosisProgram.from_settings(
        database=private_world,
        planner=ScriptedPlanner(),
        executor=ScriptedExecutor(good_claims),
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "overstated"}),
        composer=ScriptedComposer(),
    )
    result = program(query=QUERY)
    program.store.close()  # DuckDB lets one process open the file at a time

    shown = run_cli("show", result.session_id, database=private_world)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    order = [
        text.index(heading)
        for heading in ("final answer", "composer input", "verifier: claim checks", "gatekeeper", "tool invocations")
    ]
    assert order == sorted(order)
    assert "LOW_CONFID_WITH_DISCLAIMER" in text and "query_order" in text and "query_logs" in text
    assert text.index("final answer") < text.index("what each agent contributed") < text.index("composer input")
    assert "executor claims: kept 2 · rewritten 0 · added by code 0 · dropped 0" in text and "composer: shown" in text

    as_json = json.loads(run_cli("show", result.session_id, "--json", database=private_world).stdout)
    evaluation = as_json["session"]["self_evaluation"]["verifier_evaluation"]
    assert evaluation["verdict"] == "LOW_CONFID"
    assert {step["agent"] for step in as_json["agent_steps"]} == {"planner", "executor", "verifier", "composer"}
    assert len(as_json["tool_invocations"]) == 2
    contributions = as_json["session"]["self_evaluation"]["contributions"]
    assert contributions["rounds"][0]["verifier"] == {"model_called": True, "labels_from_model": 2,
                                                       "labels_from_code": 0, "labels_from_caps": 0}


def test_show_unknown_session_is_a_clear_error(private_world: Path) -> None:
    shown = run_cli("show", "no-such-session", database=private_world)
    assert shown.returncode == 2
    assert "no-such-session" in shown.stdout + shown.stderr and "Traceback" not in shown.stderr


def test_ask_with_invalid_settings_fails_before_loading_any_model(tmp_path: Path) -> None:
    settings = tmp_path / "bad.yaml"
    settings.write_text("verifier:\n  low_confidence_threshold: 7\n", encoding="utf-8")
    asked = runner.invoke(app, ["ask", QUERY, "--settings", str(settings), "--database", str(tmp_path / "x.duckdb")])
    assert asked.exit_code == 2
    assert "low_confidence_threshold" in asked.stdout


def test_show_says_which_labels_came_from_code(private_world: Path) -> None:
    from tests.modules.scripted import claim, v2

    def quotes(results: list, _round: int) -> str:
        order, _logs = results
        return v2(claim("claim-1", order))

    program = DiagnosisProgram.from_settings(
        database=private_world, planner=ScriptedPlanner(), executor=ScriptedExecutor(quotes),
        verifier=ScriptedVerifier({}), composer=ScriptedComposer(),
    )
    result = program(query=QUERY)
    program.store.close()
    text = run_cli("show", result.session_id, database=private_world).stdout
    assert "labels decided by code" in text and "confirmed by code" in text
