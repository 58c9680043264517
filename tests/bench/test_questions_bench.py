"""bench/questions.py scores a JSONL of recorded answers without running anything, and names a bad line."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.optimize.question_metrics import AnsweredQuestion
from tests.bench.scripts import load_bench


def test_score_mode_prints_rates_with_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("questions")
    rows = [
        AnsweredQuestion(id="a", text="订单 456 为什么付款失败？", locale="zh", incident="INC-20261128-03",
                         model="m", output_type="DEGRADED", verdict="REJECT",
                         answer="当前无法基于已获取证据生成可靠结论",
                         round_seconds=[10.0, 12.0]),
        AnsweredQuestion(id="b", text="Why did search-service crash?", locale="en", incident=None, model="m",
                         error="RuntimeError: boom"),
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(row.model_dump_json() + "\n" for row in rows), encoding="utf-8")
    assert bench.main(["--score", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 question(s), 1 failed to run" in out
    assert "0/1 = 0.0 % [95 % CI 0.0–79.3]" in out
    assert "seconds per round, p50" in out and "11.0 s" in out


def test_score_mode_names_the_bad_line_without_a_traceback(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("questions")
    path = tmp_path / "answers.jsonl"
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    assert bench.main(["--score", str(path)]) == 2
    assert "answers.jsonl:1" in capsys.readouterr().err
    assert bench.main(["--score", str(tmp_path / "missing.jsonl")]) == 2


def test_code_alone_confirms_the_incident_of_a_question_without_its_error_code(tmp_path: Path) -> None:
    """bench/questions_code_only.py: every model silenced, the answer's confirmed fact is one code found and stated."""
    from evigate.datasets.questions import load_questions
    from evigate.demo.catalog import INCIDENTS
    from evigate.optimize.question_metrics import score_answer

    bench = load_bench("questions_code_only")
    asked = [q for q in load_questions(split="dev") if q.id in ("service-time-zh-02", "none-other-day-01")]
    answered = {item.id: score_answer(item, INCIDENTS) for item in bench.answer(asked, tmp_path / "a.jsonl")}
    assert answered["service-time-zh-02"].useful and not answered["service-time-zh-02"].wrong
    assert not answered["none-other-day-01"].confirmed and not answered["none-other-day-01"].wrong
    assert len((tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()) == 2
