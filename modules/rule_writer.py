"""The rule-evaluation writer: V1's second, independent writer of ``self_evaluation``, on a thread of its own.

It runs while the Composer writes, so its failure cannot delay the answer. But a failure or a writer still busy
when the program finishes must not vanish: either one is recorded as an ``agent_step`` of ``rule_evaluation``
(status ``error`` or ``timeout``) that says why the ``rule_evaluation`` slot is missing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

RULE_EVALUATION_WAIT_SECONDS = 30.0
"""How long the program waits for the rule writer before finishing the session without its slot."""

AGENT_NAME = "rule_evaluation"


class RuleEvaluationWriter:
    """Runs ``write`` on a daemon thread at once; :meth:`settle` waits for it and records what went wrong."""

    def __init__(self, write: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._run, args=(write,), daemon=True, name="evigate-rule-evaluation")
        self._thread.start()

    def _run(self, write: Callable[[], Any]) -> None:
        try:
            write()
        except BaseException as exc:  # kept for settle(): a thread's exception would otherwise only reach stderr
            self.error = exc

    def settle(self, store: Any, session_id: str, round_number: int, timeout_s: float) -> str | None:
        """Wait up to ``timeout_s``; record a failure or a timeout as an agent step and return its message."""
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            status = "timeout"
            problem = (
                f"rule evaluation did not finish within {timeout_s:g}s; the session was finished without its "
                "rule_evaluation slot (a late result may still be written)"
            )
        elif self.error is not None:
            status = "error"
            problem = f"rule evaluation failed: {type(self.error).__name__}: {self.error}"[:2000]
        else:
            return None
        store.record_step(
            session_id, round_number, AGENT_NAME, thought=problem[:300], model_output="",
            latency_ms=(time.perf_counter() - self._started) * 1000, status=status, error=problem,
        )  # fmt: skip
        return problem
