"""Running one agent call: the agent's LM and JSON adapter in context, a time limit, and what it cost.

Token counts and the raw model text come from DSPy's global LM history, so they are captured for built-in and
injected agents alike, whatever LM they use.
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.clients import base_lm

from evigate.llm.adapter import adapter_for
from evigate.modules import progress


@dataclass
class AgentCall:
    """The outcome of one agent call; ``error`` is set instead of raising."""

    agent: str
    prediction: dspy.Prediction | None
    raw_texts: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    error: str | None = None
    exception: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.prediction is not None

    @property
    def raw_text(self) -> str:
        return "\n".join(self.raw_texts)


def call_agent(agent: Any, agent_name: str, lm: dspy.LM | None, timeout_s: float, **inputs: Any) -> AgentCall:
    """Call ``agent(**inputs)`` with ``lm`` and the JSON adapter in context; never raises.

    A call that outlives ``timeout_s`` is reported as an error. Its worker thread cannot be killed and finishes in
    the background; its result is discarded.
    """
    marker = base_lm.GLOBAL_HISTORY[-1] if base_lm.GLOBAL_HISTORY else None
    progress.stage_started(agent_name)
    started = time.perf_counter()

    def run() -> Any:
        overrides: dict[str, Any] = {"adapter": adapter_for(lm if lm is not None else dspy.settings.lm)}
        if lm is not None:
            overrides["lm"] = lm
        with dspy.context(**overrides):
            return agent(**inputs)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"evigate-{agent_name}")
    future = pool.submit(run)
    prediction: Any = None
    error: str | None = None
    exception: BaseException | None = None
    try:
        prediction = future.result(timeout=timeout_s)
    except concurrent.futures.TimeoutError:
        error = f"{agent_name} timed out after {timeout_s:.0f}s"
    except Exception as exc:  # any agent failure becomes data: the program degrades, it never crashes
        exception = exc
        error = f"{agent_name} failed: {type(exc).__name__}: {_short(str(exc))}"
    finally:
        pool.shutdown(wait=False)
    latency_ms = (time.perf_counter() - started) * 1000
    if error is None and not isinstance(prediction, dspy.Prediction):
        error = f"{agent_name} returned {type(prediction).__name__}, not a dspy.Prediction"
        prediction = None
    call = AgentCall(agent_name, prediction, latency_ms=latency_ms, error=error, exception=exception)
    _attach_history(call, marker)
    if exception is not None and hasattr(exception, "lm_response") and not call.raw_texts:
        call.raw_texts.append(str(exception.lm_response))
    progress.stage_finished(agent_name, ok=call.ok, detail=call.error)
    return call


def _attach_history(call: AgentCall, marker: Any) -> None:
    history = base_lm.GLOBAL_HISTORY
    start = 0
    if marker is not None:
        for index in range(len(history) - 1, -1, -1):
            if history[index] is marker:
                start = index + 1
                break
    for entry in history[start:]:
        usage = entry.get("usage") or {}
        call.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        call.completion_tokens += int(usage.get("completion_tokens") or 0)
        for output in entry.get("outputs") or []:
            call.raw_texts.append(output if isinstance(output, str) else str(output.get("text", output)))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
