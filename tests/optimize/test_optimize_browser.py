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
