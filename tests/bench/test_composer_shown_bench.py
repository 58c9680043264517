"""bench/composer_shown.py: the Composer alone on recorded inputs, judged by the same guards the program applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evigate.modules.program import DiagnosisProgram
from evigate.signatures import ComposerInput, ComposerOutput
from tests.bench.scripts import load_bench
from tests.modules.scripted import ScriptedComposer, faithful_answer

LOG = "query_logs 返回：2026-11-28 06:10:00 WARN notification-service ERR_SMS_PROVIDER sms retry queue"
INPUT = ComposerInput(original_query="早上短信为什么发不出去？", verdict="PASS",
                      allowed_claims=[{"claim_id": "c1", "claim_type": "symptom", "claim_text": LOG}])


def _answers(tmp_path: Path) -> Path:
    rows = [
        {"id": "kept", "split": "train", "verdict": "PASS", "composer_input": INPUT.model_dump()},
        {"id": "rendered", "split": "train", "verdict": "REJECT", "composer_input": INPUT.model_dump()},
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def test_a_faithful_composer_is_shown_and_the_question_restated_is_not(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("composer_shown")
    rows = bench._inputs([str(_answers(tmp_path))])
    assert [row[0] for row in rows] == ["kept"]  # a REJECT answer never asks the Composer
    database = tmp_path / "a.duckdb"
    faithful = DiagnosisProgram.from_settings(database=database, composer=ScriptedComposer(faithful_answer))
    assert bench.measure(faithful, rows)[0] == 1

    def echo(ci: ComposerInput) -> ComposerOutput:
        return ComposerOutput(answer_summary=ci.original_query, user_facing_answer=ci.original_query)

    echoing = DiagnosisProgram.from_settings(database=database, composer=ScriptedComposer(echo))
    shown, kinds = bench.measure(echoing, rows)
    assert shown == 0 and any("question" in kind for kind in kinds)
    assert "replaced kept PASS" in capsys.readouterr().out


def test_a_bad_line_is_named_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("composer_shown")
    path = tmp_path / "answers.jsonl"
    path.write_text('{"id": "a", "composer_input": {"verdict": "MAYBE"}}\n', encoding="utf-8")
    assert bench.main([str(path)]) == 2
    assert "answers.jsonl:1" in capsys.readouterr().err
    assert bench.main([str(tmp_path / "missing.jsonl")]) == 2
