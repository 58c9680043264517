"""Every CLI failure is one clear line, never a traceback or local variables; data never reaches rich as markup."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from evigate.cli.app import app, main
from evigate.cli.terminal import strip_controls
from evigate.store import AuditStore

MARKUP = "[/api/pay] 支付失败 [bold]ERR_TIMEOUT[/bold"
ANSI = "\x1b[2J\x1b[31mred alert\x1b[0m\x07 \x1b]0;pwned\x07 done\x9b2J"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    captured = capsys.readouterr()
    code = exit_info.value.code
    return (0 if code is None else int(code)), captured.out + captured.err


def assert_one_clear_error(output: str, *needles: str) -> None:
    assert "Traceback" not in output and "locals" not in output.lower() and "settings = " not in output
    assert output.count("error:") == 1, output
    for needle in needles:
        assert needle in output, output


def test_typer_never_prints_pretty_tracebacks_with_locals() -> None:
    assert app.pretty_exceptions_enable is False and app.pretty_exceptions_show_locals is False


def test_an_empty_query_is_a_clear_error(capsys: pytest.CaptureFixture[str], world_db: Path) -> None:
    code, output = run(["ask", "   ", "--database", str(world_db)], capsys)
    assert code == 2
    assert_one_clear_error(output, "question is empty")


def test_a_directory_as_settings_file_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, world_db: Path
) -> None:
    code, output = run(["ask", "订单 123 为什么失败", "--settings", str(tmp_path), "-d", str(world_db)], capsys)
    assert code == 2
    assert_one_clear_error(output, "directory", str(tmp_path))


def test_bad_yaml_in_an_env_override_names_the_variable_never_its_value(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, world_db: Path
) -> None:
    monkeypatch.setenv("EVIGATE_MODELS__API_KEY", "[sk-topsecret")
    code, output = run(["show", "some-session", "-d", str(world_db)], capsys)
    assert code == 2
    assert_one_clear_error(output, "EVIGATE_MODELS__API_KEY")
    assert "topsecret" not in output


def test_an_unknown_session_id_is_a_clear_error(capsys: pytest.CaptureFixture[str], world_db: Path) -> None:
    code, output = run(["show", "no-such-session", "-d", str(world_db)], capsys)
    assert code == 2
    assert_one_clear_error(output, "no-such-session")


def test_a_locked_database_is_a_clear_error(capsys: pytest.CaptureFixture[str], private_world: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ready', flush=True);"
         " time.sleep(60)", str(private_world)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        code, output = run(["show", "any-session", "-d", str(private_world)], capsys)
    finally:
        holder.kill()
        holder.wait()
    assert code == 2
    assert_one_clear_error(output, "locked")


def test_an_unexpected_failure_is_one_line_without_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, world_db: Path
) -> None:
    import evigate.cli.diagnose as diagnose

    def explode(*_: object, **__: object) -> None:
        settings = {"api_key": "sk-never-shown"}  # a local a pretty traceback would print
        raise RuntimeError(f"boom with {len(settings)} setting")

    monkeypatch.setattr(diagnose, "build_program", explode)
    code, output = run(["ask", "订单 123 为什么失败", "-d", str(world_db)], capsys)
    assert code == 1
    assert_one_clear_error(output, "internal error", "RuntimeError")
    assert "sk-never-shown" not in output


def test_show_prints_markup_and_control_characters_in_data_literally(
    capsys: pytest.CaptureFixture[str], private_world: Path
) -> None:
    with AuditStore(private_world) as store:
        session_id = store.start_session(MARKUP)
        store.record_invocation(session_id, 1, "query_logs", {"order_id": "[/api/pay]"}, f"{MARKUP}\n{ANSI}")
        store.record_step(session_id, 1, "executor", thought=f"{MARKUP} {ANSI}", model_output=MARKUP)
        store.merge_self_evaluation(session_id, "verifier_evaluation", {"reasons": [MARKUP, ANSI]})
        store.finish_session(session_id, output_type="DEGRADED", verdict="REJECT", answer=f"答复 {MARKUP}",
                             rounds=1, groundedness_score=0.0)
    code, output = run(["show", session_id, "-d", str(private_world)], capsys)
    assert code == 0, output
    assert "[/api/pay]" in output and "[bold]ERR_TIMEOUT" in output
    assert "red alert" in output and "\x1b" not in output and "\x07" not in output and "\x9b" not in output


def test_strip_controls_keeps_text_newlines_and_tabs() -> None:
    assert strip_controls(ANSI) == "red alert  done"
    assert strip_controls("a\tb\nc\r\nd\x00e") == "a\tb\nc\nde"


def test_ask_shows_live_stages_driven_by_progress_events(world_db: Path) -> None:
    import io

    from rich.console import Console

    from evigate.cli.live import StageDisplay
    from evigate.modules.program import DiagnosisProgram
    from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
    from tests.modules.test_program_routing import QUERY, good_claims

    program = DiagnosisProgram.from_settings(
        database=world_db, planner=ScriptedPlanner(), executor=ScriptedExecutor(good_claims, sleep_s=0.6),
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"}),
        composer=ScriptedComposer(),
    )
    screen = io.StringIO()
    lines: list[str] = []
    display = StageDisplay(Console(file=screen, force_terminal=True, width=200))
    original = display.on_event

    def spy(event: object) -> None:
        original(event)  # type: ignore[arg-type]
        lines.append(display.line().plain)

    display.on_event = spy  # type: ignore[method-assign]
    with display:
        result = display.run(program, QUERY)
        time.sleep(0.3)
    assert result.verdict == "PASS"
    assert any(line.startswith("round 1 · executor …") for line in lines)
    assert "planner ✓" in lines[-1] and "composer ✓" in lines[-1]
    assert "executor …" in screen.getvalue()  # drawn while the executor ran


def test_a_postgresql_url_given_to_database_reaches_the_store_whole(capsys: pytest.CaptureFixture[str]) -> None:
    # Typed as a Path, "postgresql://u@h/db" became "postgresql:/u@h/db": a DuckDB file of that name was opened.
    import socket

    with socket.socket() as probe:  # a port nothing listens on: the store must try PostgreSQL there and say so
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://evigate:pw-never-shown@127.0.0.1:{port}/evigate"
    code, output = run(["show", "no-such-session", "--database", url], capsys)
    assert code != 0
    assert_one_clear_error(output, f"127.0.0.1:{port}")
    assert "pw-never-shown" not in output and not Path("postgresql:").exists()
