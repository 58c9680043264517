"""MLflow plumbing: where runs go, one experiment per agent, DSPy autologging, and the artifacts we add.

Default store: a local SQLite file ``./mlruns.db`` (artifacts beside it in ``./mlartifacts``); the standard
``MLFLOW_TRACKING_URI`` overrides it. A fresh SQLite store runs MLflow's schema migrations on first use
(about 2 s here), once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from evigate.errors import ConfigError

DEFAULT_DB_FILE = "mlruns.db"
ARTIFACTS_DIR = "mlartifacts"
EXPERIMENT_PREFIX = "evigate-"


def tracking_uri(base_dir: str | Path | None = None) -> str:
    """``$MLFLOW_TRACKING_URI`` if set, else ``sqlite:///<base_dir or cwd>/mlruns.db`` (absolute)."""
    configured = os.environ.get("MLFLOW_TRACKING_URI")
    if configured:
        return configured
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    return f"sqlite:///{(base / DEFAULT_DB_FILE).resolve()}"


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI, else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "sqlite":
        return None
    return Path(uri[len("sqlite:///"):]) if uri.startswith("sqlite:///") else None


def experiment_name(agent: str) -> str:
    return f"{EXPERIMENT_PREFIX}{agent}"


def configure(uri: str | None = None) -> str:
    """Point MLflow at ``uri`` (default :func:`tracking_uri`) and return it."""
    import mlflow

    uri = uri or tracking_uri()
    scheme = urlparse(uri).scheme
    if scheme in ("", "file") or len(scheme) == 1:  # a bare path, file:…, or a Windows drive letter
        # MLflow's file store takes no new runs ("maintenance mode"); say so instead of failing mid-job.
        path = Path(uri.removeprefix("file://").removeprefix("file:"))
        raise ConfigError(f"tracking URI {uri!r} is a directory store, which MLflow no longer writes: use a database, "
                          f"e.g. --tracking-uri sqlite:///{(path / DEFAULT_DB_FILE).resolve()}")
    mlflow.set_tracking_uri(uri)
    return uri


def ensure_experiment(agent: str, uri: str) -> str:
    """Create (or reuse) the agent's experiment; on SQLite its artifacts live next to the database file."""
    import mlflow

    name = experiment_name(agent)
    existing = mlflow.get_experiment_by_name(name)
    if existing is not None:
        experiment_id = existing.experiment_id
    else:
        db = sqlite_path(uri)
        location = (db.parent / ARTIFACTS_DIR / name).resolve().as_uri() if db else None
        experiment_id = mlflow.create_experiment(name, artifact_location=location)
    mlflow.set_experiment(experiment_id=experiment_id)
    return experiment_id


def enable_autolog() -> None:
    """DSPy autologging: traces of module calls, compile runs (params, trainset, best program) and eval runs."""
    import mlflow

    mlflow.dspy.autolog(
        log_traces=True,
        log_traces_from_compile=False,
        log_traces_from_eval=True,
        log_compiles=True,
        log_evals=True,
        silent=True,
    )


def disable_autolog() -> None:
    import mlflow

    mlflow.dspy.autolog(disable=True, silent=True)


@contextmanager
def child_run(name: str) -> Iterator[Any]:
    """A nested run, so one evaluation's autologged artifacts do not overwrite another's."""
    import mlflow

    with mlflow.start_run(run_name=name, nested=True) as run:
        yield run


def log_dataset(rows: Sequence[Mapping[str, Any]], name: str, context: str, digest: str) -> None:
    """Log a fixture split as an MLflow dataset input (name, digest, row count) of the active run."""
    import mlflow
    import pandas as pd

    frame = pd.DataFrame(list(rows))
    dataset = mlflow.data.from_pandas(frame, name=name, digest=digest)
    mlflow.log_input(dataset, context=context)


def log_table(rows: Sequence[Mapping[str, Any]], artifact_file: str) -> None:
    """Log rows as an MLflow table artifact (shown in the run's artifact view and the evaluation UI)."""
    import mlflow
    import pandas as pd

    if rows:
        mlflow.log_table(data=pd.DataFrame(list(rows)), artifact_file=artifact_file)


def log_confusion_matrix(confusion: Mapping[str, Mapping[str, int]], labels: Sequence[str], title: str,
                         artifact_file: str) -> None:
    """Plot a gold × code-verdict confusion matrix and log it as a PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import mlflow

    values = [[confusion.get(gold, {}).get(pred, 0) for pred in labels] for gold in labels]
    figure, axis = plt.subplots(figsize=(4.6, 4.0), dpi=110)
    image = axis.imshow(values, cmap="Blues")
    axis.set_xticks(range(len(labels)), labels=labels)
    axis.set_yticks(range(len(labels)), labels=labels)
    axis.set_xlabel("code verdict")
    axis.set_ylabel("gold verdict")
    axis.set_title(title, fontsize=10)
    peak = max((v for row in values for v in row), default=0)
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            axis.text(j, i, str(value), ha="center", va="center", color="white" if value > peak / 2 else "black")
    figure.colorbar(image, ax=axis, fraction=0.046)
    figure.tight_layout()
    mlflow.log_figure(figure, artifact_file)
    plt.close(figure)
