"""Issue 22 item 12: no control character of an answer, a context file's name or a reason reaches the terminal —
not C0, not C1 (U+009B, the one-byte CSI, included), not an ESC sequence."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app

_register_commands()
runner = CliRunner()
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LOG = "pay-gateway 调用 unionpay 超时，耗时 5300 ms，readTimeout 为 3000 ms。"
CONTROLS = st.sampled_from([chr(c) for c in (*range(0, 9), *range(11, 32), *range(0x7F, 0xA0))])


def _run(tmp_path: Path, answer: str) -> str:
    (tmp_path / "answer.txt").write_text(answer, "utf-8")
    (tmp_path / "gateway.log").write_text(LOG, "utf-8")
    done = runner.invoke(app, ["verify", "-a", str(tmp_path / "answer.txt"), "-c", str(tmp_path / "gateway.log")])
    assert done.exit_code in (0, 1), done.output
    return done.output


def test_the_issue_csi_does_not_reach_the_table(tmp_path: Path) -> None:
    output = _run(tmp_path, "pay-gateway 耗时 4800 ms。\x9b2J\x9b31mscreen cleared \x1b[2J\x1b]0;title\x07")
    assert "\x9b" not in output and "\x1b" not in output and "screen cleared" in output


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.one_of(CONTROLS, st.sampled_from(["pay-gateway 耗时 ", "5300 ms", "。", "[bold]x[/bold]",
                                                             "\n", "Order 123 failed", " "])), min_size=1, max_size=40))
def test_a_control_character_never_reaches_the_terminal_table(tmp_path: Path, pieces: list[str]) -> None:
    output = _run(tmp_path, "".join(pieces))
    assert not CONTROL.search(output), repr(CONTROL.findall(output))


def test_json_output_escapes_c1_controls_and_keeps_the_value(tmp_path: Path) -> None:
    import json

    answer = "pay-gateway 耗时 5300 ms。\x9b2J"
    (tmp_path / "answer.txt").write_text(answer, "utf-8")
    (tmp_path / "gateway.log").write_text(LOG, "utf-8")
    done = runner.invoke(app, ["verify", "-a", str(tmp_path / "answer.txt"), "-c", str(tmp_path / "gateway.log"),
                               "--json"])
    assert not CONTROL.search(done.stdout) and "\\u009b" in done.stdout
    assert "\x9b" in "".join(sentence["text"] for sentence in json.loads(done.stdout)["sentences"])
