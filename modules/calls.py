"""Running one agent call: the agent's LM and JSON adapter in context, a time limit, and what it cost.

Token counts and the raw model text come from DSPy's global LM history, so they are captured for built-in and
injected agents alike, whatever LM they use.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.clients import base_lm

from evigate.llm.adapter import adapter_for
from evigate.modules.call_toolbox import CallToolbox
from evigate.modules.progress import Progress

logger = logging.getLogger(__name__)

def discarded_step_note(store: Any, session_id: str, round_number: int, agent_name: str) -> Callable[[str], None]:
    """A late-result note written as an agent step of this session and round (status ``discarded``)."""

    def note(text: str) -> None:
        store.record_step(
            session_id, round_number, agent_name, thought=text, model_output="", status="discarded", error=text
        )

    return note


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


def call_agent(
    agent: Any,
    agent_name: str,
    lm: dspy.LM | None,
    timeout_s: float,
    *,
    note_late: Callable[[str], None] | None = None,
    progress: Progress | None = None,
    **inputs: Any,
) -> AgentCall:
    """Call ``agent(**inputs)`` with ``lm`` and the JSON adapter in context; never raises (but lets Ctrl-C through).

    A call that outlives ``timeout_s`` is reported as an error. Its worker thread cannot be killed and finishes in
    the background: a ``toolbox`` input is lent to this call only (`CallToolbox`), so the late thread can record no
    more tool calls, and its result is discarded and noted — through ``note_late``, else as an agent step of the
    toolbox's own session and round — never recorded into a later round. ``progress`` hears of the call's stage and
    of its tool calls (default: nobody).
    """
    marker = base_lm.GLOBAL_HISTORY[-1] if base_lm.GLOBAL_HISTORY else None
    progress = progress or Progress()
    progress.stage_started(agent_name)
    started = time.perf_counter()
    reporter = progress.tool_call_reporter()  # the agent's tool calls are reported from the agent's own thread
    lent = CallToolbox(inputs["toolbox"], agent_name, reporter) if inputs.get("toolbox") is not None else None
    if lent is not None:
        inputs["toolbox"] = lent

    future = _start(agent, agent_name, lm, inputs)
    prediction: Any = None
    error: str | None = None
    exception: BaseException | None = None
    ended = "interrupted"
    try:
        prediction = future.result(timeout=timeout_s)
        ended = "answered"
    except concurrent.futures.TimeoutError:
        ended = f"deadline of {timeout_s:g}s passed"
        error = f"{agent_name} timed out after {timeout_s:.0f}s; a late result is discarded"
        note = note_late or (_step_note(lent, agent_name) if lent is not None else None)
        future.add_done_callback(lambda done: _discard_late(done, agent_name, started, timeout_s, lent, note))
    except Exception as exc:  # any agent failure becomes data: the program degrades, it never crashes
        ended = "failed"
        exception = exc
        error = f"{agent_name} failed: {type(exc).__name__}: {_short(str(exc))}"
    finally:
        if lent is not None:
            lent.close(ended)
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


def _start(agent: Any, agent_name: str, lm: dspy.LM | None, inputs: dict[str, Any]) -> concurrent.futures.Future[Any]:
    """Run ``agent(**inputs)`` with ``lm`` and its adapter in context on a thread of its own; its future."""

    def run() -> Any:
        overrides: dict[str, Any] = {"adapter": adapter_for(lm if lm is not None else dspy.settings.lm)}
        if lm is not None:
            overrides["lm"] = lm
        with dspy.context(**overrides):
            return agent(**inputs)

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def work() -> None:
        try:
            future.set_result(run())
        except BaseException as exc:  # handed to the waiting caller, like a pool's worker does
            future.set_exception(exc)

    # A daemon thread, not a pool's worker: the interpreter joins pool workers at exit, so a call hung on a slow
    # model server would keep `evigate ask` from ending after Ctrl-C until the server answered.
    future.set_running_or_notify_cancel()
    threading.Thread(target=work, name=f"evigate-{agent_name}", daemon=True).start()
    return future


def _discard_late(
    done: concurrent.futures.Future,
    agent_name: str,
    started: float,
    timeout_s: float,
    lent: CallToolbox | None,
    note: Callable[[str], None] | None,
) -> None:
    """Runs in the late thread when it finally ends: its result is dropped, and that fact is written down."""
    elapsed = time.perf_counter() - started
    outcome = "failure" if done.exception() is not None else "result"
    refused = f"; {lent.refused} tool call(s) refused after the deadline" if lent is not None and lent.refused else ""
    text = (
        f"{agent_name}'s late {outcome} discarded: it ended after {elapsed:.1f}s, past its {timeout_s:g}s "
        f"deadline{refused}"
    )
    logger.warning(text)
    if note is None:
        return
    with _late_write() as allowed:
        if not allowed:
            return  # the interpreter is exiting: the log line stays, the store is not touched any more
        try:
            note(text)
        except Exception as exc:  # the session may be finished and its store closed by now; the log line stays
            logger.warning("could not note the late %s result in the audit: %s", agent_name, exc)


# A late note is written from a daemon thread. Were the interpreter to finish while that thread is inside the
# store's C++ code (DuckDB), the thread would be torn down there and the process abort ("terminate called after
# throwing an instance of ''", exit 134): seen when a process ended just after an agent's deadline. So exit waits
# for the notes being written, briefly, and no note starts after that.
_LATE_WRITES = threading.Condition()
_late_state = {"writing": 0, "exiting": False}
LATE_WRITE_WAIT_S = 5.0
"""How long exit waits for late notes already being written."""


@contextlib.contextmanager
def _late_write() -> Iterator[bool]:
    with _LATE_WRITES:
        if _late_state["exiting"]:
            allowed = False
        else:
            allowed = True
            _late_state["writing"] += 1
    try:
        yield allowed
    finally:
        if allowed:
            with _LATE_WRITES:
                _late_state["writing"] -= 1
                _LATE_WRITES.notify_all()


def finish_late_writes(timeout_s: float = LATE_WRITE_WAIT_S) -> bool:
    """Refuse new late notes and wait up to ``timeout_s`` for those being written; whether none is left."""
    with _LATE_WRITES:
        _late_state["exiting"] = True
        return _LATE_WRITES.wait_for(lambda: _late_state["writing"] == 0, timeout_s)


atexit.register(finish_late_writes)


def _step_note(lent: CallToolbox, agent_name: str) -> Callable[[str], None]:
    """Write a late-result note as an agent step of the call's own session and round (status ``discarded``)."""
    return discarded_step_note(lent.store, lent.session_id, lent.round, agent_name)


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
