"""The live stage line of `evigate ask`: round, running stage and elapsed time, driven by progress events.

    round 1 · executor … 12.4s   (planner ✓ 2.1s)   total 14.5s

Events come from :mod:`evigate.modules.progress` (this display is the program's observer); the line is redrawn four
times a second by rich's Live, which computes the running stage's elapsed time at each redraw.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from evigate.modules import progress


class StageDisplay:
    """``with StageDisplay(console) as display: result = display.run(program, query)``."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._lock = threading.Lock()
        self._started = time.perf_counter()
        self._round: int | None = None
        self._stage: str | None = None
        self._stage_started = self._started
        self._finished: list[tuple[str, bool, float]] = []  # stages of the current round
        self._spinner = Spinner("dots")
        self._live = Live(self, console=console, refresh_per_second=4, transient=True)

    def on_event(self, event: progress.ProgressEvent) -> None:
        with self._lock:
            if event.round is not None and event.round != self._round:
                self._round, self._finished = event.round, []
            if event.kind == "stage_started":
                self._stage, self._stage_started = event.stage, time.perf_counter()
            elif event.kind == "stage_finished" and event.stage is not None:
                self._finished.append((event.stage, bool(event.ok), event.stage_seconds or 0.0))
                self._stage = None

    def run(self, program: Any, query: str) -> Any:
        return program(query=query, observer=self.on_event)

    def line(self) -> Text:
        now = time.perf_counter()
        with self._lock:
            text = Text()
            text.append(f"round {self._round or 1}", style="bold")
            if self._stage:
                text.append(f" · {self._stage} … {now - self._stage_started:.1f}s", style="cyan")
            else:
                text.append(" · starting" if not self._finished else " · checking", style="cyan")
            if self._finished:
                marks = [f"{stage} {'✓' if ok else '✗'} {seconds:.1f}s" for stage, ok, seconds in self._finished]
                done = "  ".join(marks)
                text.append(f"   ({done})", style="dim")
            text.append(f"   total {now - self._started:.1f}s", style="dim")
        return text

    def __rich__(self) -> Table:
        grid = Table.grid(padding=(0, 1))
        grid.add_row(self._spinner, self.line())
        return grid

    def __enter__(self) -> StageDisplay:
        self._live.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._live.stop()
