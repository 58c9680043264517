"""A team's own incidents as training data: ask → `evigate label` → fill in → `eval --data` / `optimize --data`.

Driven end to end with scripted agents on the real demo world and audit store; the Verifier and Composer being
evaluated or optimized answer through a DummyLM keyed by text only their case holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy
import mlflow
import pytest
import yaml
from dspy.utils import DummyLM
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app
from evigate.datasets import ComposerCase, VerifierCase, load_own_cases, read_cases
from evigate.errors import DatasetError
from evigate.modules.program import DiagnosisProgram
from evigate.optimize.data import load_agent_data
from evigate.optimize.eval_jobs import run_eval
from evigate.optimize.jobs import OptimizeConfig, run_optimize
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
from tests.modules.test_program_routing import LOG_FACT, QUERY, good_claims
from tests.optimize.conftest import composer_answer, verifier_answer

_register_commands()
runner = CliRunner()


@pytest.fixture()
def recorded(private_world: Path) -> str:
    """One real session: claim-2 overstated → LOW_CONFID, the Composer called with the allowed claim-1."""
    program = DiagnosisProgram.from_settings(
        database=private_world, planner=ScriptedPlanner(), executor=ScriptedExecutor(good_claims),
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "overstated"}),
        composer=ScriptedComposer(),
    )
    result = program(query=QUERY)
    program.store.close()
    assert result.verdict == "LOW_CONFID"
    return result.session_id


def _label(session_id: str, world: Path, out: Path) -> dict[str, Any]:
    labelled = runner.invoke(app, ["label", session_id, "--out", str(out), "--database", str(world)])
    assert labelled.exit_code == 0, labelled.output
    return yaml.safe_load(out.read_text("utf-8"))


def _fill(skeleton: dict[str, Any], split: str = "dev", case_id: str | None = None) -> dict[str, Any]:
    """What a reviewer does: agree with code's suggestions, pick a split, say what the answer must hold."""
    filled = {**skeleton, "split": split, "gold_labels": dict(skeleton["suggested_labels"]),
              "gold_verdict": skeleton["suggested_verdict"], "case_id": case_id or skeleton["case_id"]}
    filled["composer"] = {**skeleton["composer"], "must_contain": [["unionpay"]], "must_not_contain": ["唯一原因"]}
    return filled


def labelled_folder(session_id: str, world: Path, tmp_path: Path) -> Path:
    """``tmp_path/ours``: the session labelled and filled in once per split (train, dev, test)."""
    skeleton = _label(session_id, world, tmp_path / "skeleton.yaml")
    folder = tmp_path / "ours"
    folder.mkdir()
    for split in ("train", "dev", "test"):
        filled = _fill(skeleton, split, case_id=f"ours-{split}")
        (folder / f"{split}.yaml").write_text(yaml.safe_dump(filled, allow_unicode=True), "utf-8")
    return folder


def test_a_recorded_session_becomes_a_skeleton_to_label(recorded: str, private_world: Path, tmp_path: Path) -> None:
    skeleton = _label(recorded, private_world, tmp_path / "case.yaml")
    assert skeleton["verifier_input"]["original_query"] == QUERY
    assert [inv["tool_name"] for inv in skeleton["invocations"]] == ["query_order", "query_logs"]
    assert skeleton["gold_labels"] == {"claim-1": None, "claim-2": None}  # left for the reviewer
    assert skeleton["suggested_labels"] == {"claim-1": "direct_observation", "claim-2": "overstated"}
    assert skeleton["suggested_verdict"] == "LOW_CONFID" and skeleton["split"] is None
    assert skeleton["verifier_input"]["executor_structured_output"]["claims"][1]["claim_text"] == LOG_FACT
    assert '"claim-2"' in skeleton["verifier_input"]["executor_raw_output"]  # the Executor's own text
    allowed = skeleton["composer"]["composer_input"]["allowed_claims"]
    assert [claim["claim_id"] for claim in allowed] == ["claim-1"]


def test_an_unfilled_skeleton_is_a_clear_error_naming_file_line_and_field(
    recorded: str, private_world: Path, tmp_path: Path
) -> None:
    out = tmp_path / "case.yaml"
    _label(recorded, private_world, out)
    with pytest.raises(DatasetError) as error:
        load_agent_data("verifier", (), None, splits=("dev",), data_path=out)
    line = next(n for n, text in enumerate(out.read_text("utf-8").splitlines(), 1) if text.startswith("split:"))
    assert f"{out}:{line}: not labelled yet: split" in str(error.value)
    assert "gold_labels.claim-1 (code suggests direct_observation)" in str(error.value)
    assert "gold_verdict (the session's verdict was LOW_CONFID)" in str(error.value)
    # The command line says so too, before any model is loaded.
    evaluated = runner.invoke(app, ["eval", "--agent", "verifier", "--data", str(out), "--split", "dev"])
    assert evaluated.exit_code == 2 and "not labelled yet" in " ".join(evaluated.output.split())


def test_a_wrong_label_names_its_line_and_field(recorded: str, private_world: Path, tmp_path: Path) -> None:
    out = tmp_path / "case.yaml"
    filled = _fill(_label(recorded, private_world, out))
    filled["gold_labels"]["claim-2"] = "kinda_true"
    out.write_text(yaml.safe_dump(filled, allow_unicode=True, sort_keys=False), "utf-8")
    line = next(n for n, text in enumerate(out.read_text("utf-8").splitlines(), 1) if "kinda_true" in text)
    with pytest.raises(DatasetError, match=rf"{out}:{line}: invalid VerifierCase: gold_labels\.claim-2: "):
        read_cases(out, VerifierCase, mixed=True)


def test_a_filled_session_is_scored_by_eval_data(
    recorded: str, private_world: Path, tmp_path: Path, tracking_uri: str
) -> None:
    out = tmp_path / "case.yaml"
    out.write_text(yaml.safe_dump(_fill(_label(recorded, private_world, out)), allow_unicode=True), "utf-8")
    [case] = load_own_cases(out, "verifier", "dev")
    [composer_case] = load_own_cases(out, "composer", "dev")
    assert case.source == "own" and composer_case.must_contain == [["unionpay"]]

    verifier_lm = DummyLM({LOG_FACT: verifier_answer(case)}, adapter=dspy.JSONAdapter())
    scored = run_eval("verifier", "dev", lm=verifier_lm, program_dir=tmp_path / "none", tracking_uri=tracking_uri,
                      data_path=out)
    assert scored.metrics["examples"] == 1 and scored.metrics["score"] == 1.0
    assert mlflow.get_run(scored.run_id).data.params["data"] == str(out)

    key = composer_case.composer_input.allowed_claims[0].claim_text
    composer_lm = DummyLM({key: composer_answer(composer_case)}, adapter=dspy.JSONAdapter())
    composed = run_eval("composer", "dev", lm=composer_lm, program_dir=tmp_path / "none",
                        tracking_uri=tracking_uri, data_path=out)
    # The scripted answer lacks the reviewer's "unionpay": the team's own requirement is what is scored.
    assert composed.metrics["examples"] == 1 and composed.metrics["coverage"] == 0.0


def test_optimize_data_runs_on_a_labelled_directory(
    recorded: str, private_world: Path, tmp_path: Path, tracking_uri: str
) -> None:
    folder = labelled_folder(recorded, private_world, tmp_path)
    cases = load_own_cases(folder, "verifier")
    lm = DummyLM({LOG_FACT: verifier_answer(cases[0])}, adapter=dspy.JSONAdapter())
    config = OptimizeConfig(agent="verifier", optimizer="bootstrap", budget=1, program_dir=tmp_path / "program",
                            tracking_uri=tracking_uri, data_path=folder)
    result = run_optimize(config, lm=lm)
    assert result.baseline["dev"].summary.count == 1 and (tmp_path / "program" / "verifier.json").is_file()
    assert mlflow.get_run(result.run_id).data.params["data"] == str(folder)


def test_mixed_folders_give_each_agent_its_cases_and_empty_ones_fail(tmp_path: Path) -> None:
    from evigate.datasets import load_composer_cases

    folder = tmp_path / "mixed"
    folder.mkdir()
    composer = load_composer_cases()[0]
    (folder / "composer.yaml").write_text(yaml.safe_dump(composer.model_dump(mode="json"), allow_unicode=True))
    assert [case.case_id for case in load_own_cases(folder, "composer")] == [composer.case_id]
    with pytest.raises(DatasetError, match="no verifier cases"):
        load_own_cases(folder, "verifier")
    other = "dev" if composer.split != "dev" else "test"
    with pytest.raises(DatasetError, match=f"no composer cases with split {other!r}"):
        load_agent_data("composer", (), None, splits=(other,), data_path=folder)
    assert isinstance(read_cases(folder, ComposerCase, mixed=True)[0], ComposerCase)


def test_label_of_an_unknown_session_is_a_clear_error(private_world: Path, tmp_path: Path) -> None:
    labelled = runner.invoke(app, ["label", "nope", "--out", str(tmp_path / "x.yaml"), "--database",
                                   str(private_world)])
    assert labelled.exit_code == 2 and "nope" in labelled.output and not (tmp_path / "x.yaml").exists()
