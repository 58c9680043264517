"""`evigate.verify` as a library call, a DSPy metric and the `evigate verify` command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import dspy
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app

_register_commands()
runner = CliRunner()
LOG = "pay-gateway 调用 unionpay 超时，耗时 5300 ms，readTimeout 为 3000 ms。"


def test_import_evigate_stays_light_and_verify_runs_without_dspy() -> None:
    code = (
        "import sys, evigate\n"
        "assert 'dspy' not in sys.modules\n"
        "r = evigate.verify('pay-gateway 耗时 5300 ms。', ['pay-gateway 耗时 5300 ms。'])\n"
        "assert r.supported and r.verdict == 'PASS', r\n"
        "assert 'dspy' not in sys.modules and 'llama_cpp' not in sys.modules\n"
        "from evigate import verify, VerifyResult, verify_metric\n"
        "assert callable(verify) and isinstance(r, VerifyResult)\n"
        "import evigate.verification\n"
        "from evigate import verify as again\n"
        "assert again is verify\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_mapping_context_names_the_passage() -> None:
    from evigate import verify

    result = verify("耗时 5300 ms。", {"gateway.log": LOG})
    assert result.sentences[0].passage == "gateway.log"


def test_verify_metric_follows_the_dspy_metric_protocol() -> None:
    from evigate import verify_metric

    metric = verify_metric(context_field="passages", answer_field="answer")
    example = dspy.Example(question="q", passages=[LOG]).with_inputs("question")
    good = dspy.Prediction(answer="pay-gateway 调用 unionpay 超时，耗时 5300 ms。")
    bad = dspy.Prediction(answer="pay-gateway 调用 unionpay 超时，耗时 4800 ms。")
    half = dspy.Prediction(answer="pay-gateway 调用 unionpay 超时，耗时 5300 ms。数据库集群整体宕机。")
    assert metric(example, good) == 1.0
    assert metric(example, bad) == 0.0  # contradicted: REJECT scores nothing
    assert metric(example, half) == 0.5
    assert metric(example, good, trace=[]) is True and metric(example, half, trace=[]) is False
    assert metric(example, good, None, "answer", None) == 1.0  # GEPA's five-argument call
    evaluate = dspy.Evaluate(devset=[example], metric=metric, num_threads=1)

    class Echo(dspy.Module):
        def forward(self, question: str) -> dspy.Prediction:
            return good

    assert evaluate(Echo()).score == 100.0


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, "utf-8")
    return path


def test_cli_supported_answer_exits_zero_and_prints_json(tmp_path: Path) -> None:
    answer = _write(tmp_path, "answer.txt", "pay-gateway 调用 unionpay 超时，耗时 5300 ms。")
    context = _write(tmp_path, "gateway.log", LOG)
    done = runner.invoke(app, ["verify", "--answer", str(answer), "--context", str(context), "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["supported"] is True and data["verdict"] == "PASS"
    assert data["sentences"][0]["passage"] == str(context)


def test_cli_unsupported_answer_exits_one_and_escapes_markup(tmp_path: Path) -> None:
    answer = _write(tmp_path, "answer.txt", "pay-gateway 耗时 4800 ms。\n[bold]see[/bold] \x1b[31m[/api/pay]")
    one = _write(tmp_path, "a.log", LOG)
    two = _write(tmp_path, "b.log", b"binary \xff\xfe bytes")
    done = runner.invoke(app, ["verify", "-a", str(answer), "-c", str(one), "-c", str(two)])
    assert done.exit_code == 1, done.output
    assert "contradicted" in done.output and "[bold]see[/bold]" in done.output and "\x1b" not in done.output


def test_cli_missing_or_unreadable_files_get_one_clear_line(tmp_path: Path) -> None:
    context = _write(tmp_path, "gateway.log", LOG)
    cases = [
        (["--answer", str(tmp_path / "nope.txt"), "--context", str(context)], "does not exist"),
        (["--answer", str(tmp_path), "--context", str(context)], "is a directory"),
        (["--answer", str(context), "--context", str(tmp_path / "gone.log")], "does not exist"),
    ]
    for args, message in cases:
        done = subprocess.run([sys.executable, "-m", "evigate.cli", "verify", *args], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2
        assert message in done.stderr and "Traceback" not in done.stderr + done.stdout
