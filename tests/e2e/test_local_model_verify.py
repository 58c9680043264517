"""`evigate verify --model` on the real embedded model (llama.cpp on the CPU): the Verifier judges only what code left
undecided, and can never lift a claim code decided or capped. Slow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.local_model
MODEL = "local/qwen2.5-coder-0.5b"
CONTEXT = {
    "order.json": '{"order_id": "123", "status": "FAILED", "error_code": "ERR_TIMEOUT", "gateway": "pay-gateway"}',
    "gateway.log": "10:05:16 WARN [pay-gateway] call to unionpay timed out after 5300 ms (readTimeout=3000 ms)",
}
ANSWER = (
    "Order 123 failed with ERR_TIMEOUT because pay-gateway's call to unionpay timed out.\n"
    "The call to unionpay timed out after 4800 ms.\n"
    "pay-gateway call to unionpay timed out after 5300 ms (readTimeout=3000 ms)."
)


def test_verify_with_the_embedded_model_judges_only_what_code_left(tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text(ANSWER, "utf-8")
    files = []
    for name, text in CONTEXT.items():
        (tmp_path / name).write_text(text, "utf-8")
        files += ["--context", str(tmp_path / name)]
    done = subprocess.run(
        [sys.executable, "-m", "evigate.cli", "verify", "--answer", str(answer), *files, "--json", "--model", MODEL],
        capture_output=True, text=True, timeout=1800, cwd=tmp_path,
        env={**os.environ, "EVIGATE_TIMEOUTS__AGENT_SECONDS": "600"},
    )
    assert done.returncode == 1, done.stderr[-3000:]  # one sentence is contradicted
    result = json.loads(done.stdout)
    assert result["model"] == MODEL and result["supported"] is False and result["verdict"] == "REJECT"
    cause, changed, quote = result["sentences"]
    assert any("verifier" in note for note in result["notes"]), result["notes"]
    # the causal claim was the model's to judge, but never above an inference: its passages state no cause
    assert cause["label"] in ("reasonable_inference", "overstated", "unsupported", "external_unknown", "contradicted")
    assert changed["label"] == "contradicted" and changed["source"] == "code"
    assert quote["label"] == "direct_observation" and quote["source"] == "code"
