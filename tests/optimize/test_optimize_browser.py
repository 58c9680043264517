"""Headless Chromium against `evigate ui`: the optimization run and its metrics appear in the MLflow UI pages.

MLflow's UI is a JavaScript app, so the page is rendered by Chromium (``--dump-dom`` after a virtual-time budget)
and the test reads the resulting DOM text. Needs Debian's ``chromium``; skips with the reason otherwise.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import mlflow
import pytest

from evigate.optimize.jobs import OptimizeConfig, run_optimize
from evigate.optimize.ui import MlflowUI
from tests.optimize.conftest import scripted_data

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1600,1200")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)"),
]


def rendered_text(url: str, profile: Path, budget_ms: int = 20000) -> str:
    """The visible text of ``url`` after Chromium has run its scripts for ``budget_ms`` of virtual time."""
    profile.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
         "--dump-dom", url],
        capture_output=True, text=True, timeout=90, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", completed.stdout, flags=re.S)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)))


def test_optimization_run_and_metrics_show_in_the_mlflow_ui(tmp_path: Path, tracking_uri: str) -> None:
    data, lm = scripted_data("verifier", per_split=3)
    result = run_optimize(OptimizeConfig(agent="verifier", optimizer="bootstrap", budget=2,
                                         program_dir=tmp_path / "program", tracking_uri=tracking_uri), lm=lm, data=data)
    experiment_id = mlflow.get_experiment_by_name("evigate-verifier").experiment_id
    with MlflowUI(tracking_uri, port=0, log_file=tmp_path / "ui.log") as ui:
        # The experiment's runs page, sorted by an optimization metric: the run is listed and the metric named.
        runs_page = rendered_text(
            f"{ui.url}/#/experiments/{experiment_id}/runs?orderByKey=metrics.%60optimized_dev_score%60"
            "&orderByAsc=false", tmp_path / "chrome-runs")
        assert "evigate-verifier" in runs_page
        assert "optimize-verifier-bootstrap" in runs_page
        assert "optimized_dev_score" in runs_page
        assert "verifier-dev" in runs_page  # the logged dataset input
        # The run's own page, opened from the experiment: its metrics with their values.
        run_page = rendered_text(f"{ui.url}/#/experiments/{experiment_id}/runs/{result.run_id}",
                                 tmp_path / "chrome-run")
    assert "optimize-verifier-bootstrap" in run_page
    metrics = mlflow.get_run(result.run_id).data.metrics
    for name in ("baseline_dev_score", "optimized_dev_score", "optimized_test_claim_macro_f1",
                 "baseline_test_verdict_accuracy"):
        assert name in run_page
        value = metrics[name]
        shown = re.search(re.escape(name) + r" (-?[0-9.e-]+)", run_page)
        assert shown is not None and float(shown.group(1)) == pytest.approx(value, abs=1e-3), name


def test_trial_child_runs_compare_side_by_side_in_the_mlflow_ui(tmp_path: Path, tracking_uri: str) -> None:
    """A random-search job's trials, opened together on MLflow's compare-runs page (driven over CDP)."""
    import json
    import urllib.parse

    from tests.serve.cdp import Browser

    plain, _ = scripted_data("verifier", per_split=3)
    data, lm = scripted_data("verifier", per_split=3, wrong=[plain.splits["dev"][0].case_id])  # scores below 1
    result = run_optimize(OptimizeConfig(agent="verifier", optimizer="random-search", budget=1, max_demos=1,
                                         program_dir=tmp_path / "program", tracking_uri=tracking_uri), lm=lm, data=data)
    children = mlflow.search_runs(experiment_names=["evigate-verifier"], output_format="list",
                                  filter_string=f"tags.mlflow.parentRunId = '{result.run_id}'")
    trials = {child.info.run_id: child for child in children if "evigate.trial" in child.data.tags}
    assert len(trials) == 4  # several trials to compare: zero-shot, labels only, unshuffled, one shuffled
    query = urllib.parse.urlencode({"runs": json.dumps(list(trials)),
                                    "experiments": json.dumps([result.experiment_id])})
    names = json.dumps(sorted(trial.info.run_name for trial in trials.values()))
    with (MlflowUI(tracking_uri, port=0, log_file=tmp_path / "ui.log") as ui,
          Browser(tmp_path / "chrome", width=2400) as page):
        page.goto(f"{ui.url}/#/compare-runs?{query}")
        # Wait until every trial's name is shown and the metrics table has one trial_score cell per run (the grid
        # is virtualised: it renders only the columns in view, hence the wide window).
        text = page.wait_for(
            "(() => { const t = document.body.innerText; const m = t.split('Metrics\\nShow diff only\\n')[1];"
            f" return {names}.every((n) => t.includes(n)) && m && m.startsWith('trial_score')"
            " && m.split('\\nArtifacts')[0].trim().split('\\n').length === 5 && t; })()", timeout=60)
    columns = re.search(r"Run ID:\t([^\n]+)", text)
    assert columns is not None
    shown = text.split("Metrics\nShow diff only\ntrial_score\n")[1].split("\nArtifacts")[0].split("\n")
    for run_id, value in zip(columns.group(1).split("\t"), shown, strict=True):
        assert float(value) == pytest.approx(trials[run_id].data.metrics["trial_score"], abs=1e-3), run_id
    assert any(trial.data.metrics["trial_score"] < 1 for trial in trials.values())
