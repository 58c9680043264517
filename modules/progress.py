"""Progress of one diagnosis as events: the session started, a stage of a round started or finished.

Whoever runs a program and wants to follow it wraps the call in :func:`observe`; the program emits through
:func:`emit` and never knows who listens. The observer lives in a context variable, so concurrent sessions in
other threads (``evigate serve``'s workers) each see only their own events, and a program run without an
observer pays one context-variable lookup per stage. An observer that raises is dropped, never the diagnosis.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Literal

EventKind = Literal["session_started", "stage_started", "stage_finished", "tool_call"]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a diagnosis. ``elapsed_s`` counts from the start of :func:`observe`."""

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


@dataclass
class _Watch:
    observer: Observer
    started: float
    session_id: str | None = None
    round: int | None = None
    stage_started: float | None = None


_WATCH: contextvars.ContextVar[_Watch | None] = contextvars.ContextVar("evigate_progress", default=None)


@contextmanager
def observe(observer: Observer) -> Iterator[None]:
    """Deliver every event the program emits in this context (this thread) to ``observer``."""
    token = _WATCH.set(_Watch(observer, time.perf_counter()))
    try:
        yield
    finally:
        _WATCH.reset(token)


def session_started(session_id: str) -> None:
    watch = _WATCH.get()
    if watch is not None:
        watch.session_id = session_id
        _deliver(watch, "session_started")


def round_started(round_number: int) -> None:
    """Later stage events belong to this round."""
    watch = _WATCH.get()
    if watch is not None:
        watch.round = round_number


def stage_started(stage: str) -> None:
    watch = _WATCH.get()
    if watch is not None:
        watch.stage_started = time.perf_counter()
        _deliver(watch, "stage_started", stage=stage)


def stage_finished(stage: str, *, ok: bool, detail: str | None = None) -> None:
    watch = _WATCH.get()
    if watch is not None:
        began = watch.stage_started
        seconds = round(time.perf_counter() - began, 3) if began is not None else None
        _deliver(watch, "stage_finished", stage=stage, ok=ok, stage_seconds=seconds, detail=detail)


def tool_call_reporter() -> Callable[[str, Any], None] | None:
    """A reporter of tool calls for this context's observer, to hand to the thread that runs an agent (the context
    variable does not follow it there); None when nobody observes. ``report(tool_name, result)`` takes a ToolResult.
    """
    watch = _WATCH.get()
    if watch is None:
        return None

    def report(tool: str, result: Any) -> None:
        _deliver(watch, "tool_call", stage="executor", tool=tool, ok=bool(getattr(result, "success", False)),
                 invocation_id=getattr(result, "invocation_id", None), detail=getattr(result, "error", None))

    return report


def _deliver(watch: _Watch, kind: EventKind, **fields: Any) -> None:
    event = ProgressEvent(
        kind=kind,
        elapsed_s=round(time.perf_counter() - watch.started, 3),
        session_id=watch.session_id,
        round=watch.round,
        **fields,
    )
    try:
        watch.observer(event)
    except Exception:  # a broken display or a gone client must not break the diagnosis
        _WATCH.set(None)
