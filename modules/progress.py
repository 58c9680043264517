"""Progress of one diagnosis as events: the session started, a stage of a round started or finished, a tool ran.

Whoever runs a program and wants to follow it passes an observer: ``program(query=…, observer=print)``. The
program reports through the :class:`Progress` made for that call, an argument of everything that reports, and
never knows who listens; concurrent sessions in other threads (``evigate serve``'s workers) each have their own.
An observer that raises is dropped, never the diagnosis.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

EventKind = Literal["session_started", "stage_started", "stage_finished", "tool_call"]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a diagnosis. ``elapsed_s`` counts from the start of the diagnosis (its :class:`Progress`)."""

    kind: EventKind
    elapsed_s: float
    session_id: str | None = None
    round: int | None = None
    stage: str | None = None
    ok: bool | None = None  # stage_finished only: whether the stage produced a usable result
    stage_seconds: float | None = None  # stage_finished only
    detail: str | None = None
    tool: str | None = None  # tool_call only: the tool an agent called, and the invocation recorded for it
    invocation_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}


Observer = Callable[[ProgressEvent], None]


class Progress:
    """Where one diagnosis reports its progress: to ``observer``, or to nobody (None: each report costs one check).

    Made per diagnosis (``DiagnosisProgram.forward(query, observer=)``) and handed down as an argument: to the
    ``RoundRunner``, through it to each agent call, and as a tool-call reporter to the toolbox lent to an agent's
    own thread. Concurrent sessions (``evigate serve``'s workers) each have their own.
    """

    def __init__(self, observer: Observer | None = None) -> None:
        self._observer = observer
        self._started = time.perf_counter()  # ``elapsed_s`` counts from here
        self._session_id: str | None = None
        self._round: int | None = None
        self._stage_started: float | None = None

    def session_started(self, session_id: str) -> None:
        self._session_id = session_id
        self._deliver("session_started")

    def round_started(self, round_number: int) -> None:
        """Later stage events belong to this round."""
        self._round = round_number

    def stage_started(self, stage: str) -> None:
        self._stage_started = time.perf_counter()
        self._deliver("stage_started", stage=stage)

    def stage_finished(self, stage: str, *, ok: bool, detail: str | None = None) -> None:
        began = self._stage_started
        seconds = round(time.perf_counter() - began, 3) if began is not None else None
        self._deliver("stage_finished", stage=stage, ok=ok, stage_seconds=seconds, detail=detail)

    def tool_call_reporter(self) -> Callable[[str, Any], None] | None:
        """A reporter of the tool calls an agent makes, or None when nobody observes.

        ``report(tool_name, result)`` takes a ToolResult; it may run on the agent's own thread.
        """
        if self._observer is None:
            return None

        def report(tool: str, result: Any) -> None:
            self._deliver("tool_call", stage="executor", tool=tool, ok=bool(getattr(result, "success", False)),
                          invocation_id=getattr(result, "invocation_id", None), detail=getattr(result, "error", None))

        return report

    def _deliver(self, kind: EventKind, **fields: Any) -> None:
        observer = self._observer
        if observer is None:
            return
        event = ProgressEvent(kind=kind, elapsed_s=round(time.perf_counter() - self._started, 3),
                              session_id=self._session_id, round=self._round, **fields)
        try:
            observer(event)
        except Exception:  # a broken display or a gone client must not break the diagnosis
            self._observer = None
