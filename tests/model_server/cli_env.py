"""Running the `evigate` CLI as a user would, pointed at a model server, with the network cut off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

NET_GUARD = Path(__file__).parent / "net_guard"
CI_MARKERS = {"CI", "PYTEST_CURRENT_TEST", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "BUILDKITE", "TF_BUILD"}
QUESTION = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"


def server_env(api_base: str, database: Path, net_log: Path, **extra: str) -> dict[str, str]:
    """A CLI environment whose every agent uses the server at ``api_base``, with non-loopback connections refused."""
    # As a user runs it: no CI or pytest markers either (MLflow, for one, skips its telemetry when it sees them).
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("EVIGATE_", "LITELLM_", "MLFLOW_")) and key not in CI_MARKERS}
    env.update({
        "EVIGATE_DATABASE": str(database),
        "EVIGATE_MODEL": "openai/qwen",
        "EVIGATE_MODELS__API_BASE": api_base,
        "EVIGATE_MODELS__API_KEY": "sk-local-test",
        "EVIGATE_MODELS__NUM_RETRIES": "0",
        "EVIGATE_COMPILED_PROGRAM": "false",  # the built-in prompts
        "NET_GUARD_LOG": str(net_log),
        "PYTHONPATH": os.pathsep.join([str(NET_GUARD), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "MLFLOW_TRACKING_URI": f"sqlite:///{database.parent / 'mlruns.db'}",
    })
    env.update(extra)
    return env


def evigate(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evigate.cli", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def attempts(net_log: Path) -> list[str]:
    return net_log.read_text(encoding="utf-8").splitlines() if net_log.exists() else []
