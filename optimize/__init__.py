"""Metrics, evaluation and optimization jobs for the Verifier and the Composer, tracked in MLflow.

Runtime code never imports this package. Entry points: :func:`run_optimize` (``evigate optimize``),
:func:`run_eval` (``evigate eval``), :class:`MlflowUI` (``evigate ui``), and the DSPy metrics
:class:`VerifierMetric` / :class:`ComposerMetric`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evigate.optimize.composer_metric import ComposerMetric, score_composer
    from evigate.optimize.eval_jobs import EvalJobResult, run_eval
    from evigate.optimize.jobs import OptimizeConfig, OptimizeResult, run_optimize
    from evigate.optimize.ui import MlflowUI
    from evigate.optimize.verifier_metric import VerifierMetric, score_verifier

_EXPORTS = {
    "ComposerMetric": "evigate.optimize.composer_metric",
    "score_composer": "evigate.optimize.composer_metric",
    "EvalJobResult": "evigate.optimize.eval_jobs",
    "run_eval": "evigate.optimize.eval_jobs",
    "OptimizeConfig": "evigate.optimize.jobs",
    "OptimizeResult": "evigate.optimize.jobs",
    "run_optimize": "evigate.optimize.jobs",
    "MlflowUI": "evigate.optimize.ui",
    "VerifierMetric": "evigate.optimize.verifier_metric",
    "score_verifier": "evigate.optimize.verifier_metric",
}
__all__ = [
    "ComposerMetric", "EvalJobResult", "MlflowUI", "OptimizeConfig", "OptimizeResult", "VerifierMetric", "run_eval",
    "run_optimize", "score_composer", "score_verifier",
]


def __getattr__(name: str) -> Any:
    # DSPy and MLflow load only when a job runs, so importing the package (e.g. by the CLI) stays fast.
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'evigate.optimize' has no attribute {name!r}")
