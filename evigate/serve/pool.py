"""A bounded pool of diagnosis workers: one program object per worker thread, a bounded queue in front.

The program is synchronous (DSPy + llama.cpp or an HTTP model server), so each worker thread owns one program and
runs one session at a time; nothing in a program is shared between concurrent sessions except the audit store,
which is thread-safe. Past ``workers + queue_size`` admitted jobs, :meth:`DiagnosisPool.submit` refuses with
:class:`PoolFull` (the API answers 503). Workers are daemon threads: a shutdown that runs out of patience marks
the sessions still running as ``interrupted`` in the store and does not wait for the model.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evigate.errors import EvigateError
from evigate.modules import progress

logger = logging.getLogger(__name__)

INTERRUPTED_ERROR = "interrupted: evigate serve shut down before the session finished"


class PoolFull(EvigateError):
    """Every worker is busy and the queue is full."""


class PoolClosed(EvigateError):
    """The pool is shutting down and takes no more work."""


@dataclass
class Job:
    """One admitted request. ``future`` resolves to the DiagnosisResult; ``observer`` gets progress events."""

    query: str
    locale: str | None
    observer: progress.Observer | None
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    session_id: str | None = None
    submitted: float = field(default_factory=time.perf_counter)


@dataclass
class _Worker:
    program: Any
    thread: threading.Thread | None = None
    job: Job | None = None
    base_settings: Any = None  # the program's own settings; a request's locale applies to a copy

    def __post_init__(self) -> None:
        self.base_settings = getattr(self.program, "settings", None)


class DiagnosisPool:
    """``workers`` threads, each with its own program from ``program_factory()``, and a queue of ``queue_size``."""

    def __init__(self, program_factory: Callable[[], Any], *, workers: int = 2, queue_size: int = 8) -> None:
        if workers < 1 or queue_size < 0:
            raise ValueError("workers must be ≥ 1 and queue_size ≥ 0")
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._capacity = workers + queue_size
        self._admitted = 0  # queued + running
        self._lock = threading.Lock()
        self._closed = False
        self._interrupt_at: float | None = None  # monotonic time the grace period of a shutdown ends
        self._interrupted: list[str] = []  # sessions this pool marked interrupted
        # Programs are built here, before the server accepts anything, so a bad configuration fails at start.
        self._workers = [_Worker(program_factory()) for _ in range(workers)]
        for index, worker in enumerate(self._workers):
            worker.thread = threading.Thread(
                target=self._run, args=(worker,), name=f"evigate-serve-{index}", daemon=True
            )
            worker.thread.start()

    @property
    def store(self) -> Any:
        """The audit store the workers write to (shared; used for reads)."""
        return self._workers[0].program.store

    @property
    def program_settings(self) -> Any:
        """The settings the programs run with (domain, locale), for pages that show them."""
        return self._workers[0].program.settings

    @property
    def workers(self) -> int:
        return len(self._workers)

    @property
    def capacity(self) -> int:
        return self._capacity

    def load(self) -> dict[str, int]:
        """Running and queued jobs right now."""
        with self._lock:
            running = sum(worker.job is not None for worker in self._workers)
            return {"running": running, "queued": self._admitted - running, "capacity": self._capacity}

    def submit(self, query: str, locale: str | None = None, observer: progress.Observer | None = None) -> Job:
        """Admit a job or raise :class:`PoolFull` / :class:`PoolClosed` at once; never blocks."""
        job = Job(query, locale, observer)
        with self._lock:
            if self._closed:
                raise PoolClosed("the server is shutting down")
            if self._admitted >= self._capacity:
                raise PoolFull(f"all {len(self._workers)} workers are busy and the queue is full")
            self._admitted += 1
        self._queue.put(job)
        return job

    def _run(self, worker: _Worker) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            with self._lock:
                if self._closed:  # admitted but never started: refuse rather than start a session we cannot finish
                    self._admitted -= 1
                    job.future.set_exception(PoolClosed("the server shut down before this request started"))
                    continue
                worker.job = job
            try:
                if job.future.set_running_or_notify_cancel():
                    job.future.set_result(self._diagnose(worker, job))
            except BaseException as exc:  # reported to the waiting request, the worker lives on
                with contextlib.suppress(concurrent.futures.InvalidStateError):  # unless interrupted meanwhile
                    job.future.set_exception(exc)
            finally:
                with self._lock:
                    worker.job = None
                    self._admitted -= 1

    @staticmethod
    def _diagnose(worker: _Worker, job: Job) -> Any:
        program, base = worker.program, worker.base_settings
        if base is not None:
            program.settings = base if job.locale is None else base.model_copy(update={"locale": job.locale})

        def observer(event: progress.ProgressEvent) -> None:
            if event.kind == "session_started":
                job.session_id = event.session_id
            if job.observer is not None:
                job.observer(event)

        return program(query=job.query, observer=observer)

    def stop_admitting(self, interrupt_after_s: float | None = None) -> None:
        """Shutdown begins: refuse new jobs, and at once the queued jobs that never started (their requests get 503
        now, not after the grace period). Running sessions go on; with ``interrupt_after_s`` those still running
        that long from now are marked ``interrupted`` and their requests answered then (see
        :meth:`interrupt_running`), so every response is written before the HTTP server's own grace ends."""
        with self._lock:
            if self._closed:
                return  # a second signal changes nothing
            self._closed = True
            if interrupt_after_s is not None:
                self._interrupt_at = time.monotonic() + interrupt_after_s
        self._refuse_queued()
        if interrupt_after_s is not None:
            timer = threading.Timer(interrupt_after_s, self.interrupt_running)
            timer.daemon = True
            timer.start()

    def _refuse_queued(self) -> None:
        while True:
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                return
            if job is None:  # a worker's stop sentinel: leave it for the worker
                self._queue.put(None)
                return
            with self._lock:
                self._admitted -= 1
            job.future.set_exception(PoolClosed("the server shut down before this request started"))

    def interrupt_running(self) -> list[str]:
        """Mark every session still running ``interrupted`` and fail its request (the model call itself cannot be
        cancelled; its worker is a daemon thread). Returns the ids marked now."""
        with self._lock:
            running = [(worker, worker.job) for worker in self._workers if worker.job is not None]
        marked = []
        for worker, job in running:
            if job is None or job.future.done():
                continue
            if job.session_id is not None:
                try:
                    self._mark_interrupted(worker.program.store, job.session_id)
                    marked.append(job.session_id)
                except EvigateError as exc:  # e.g. the store closed already: the next store to open marks it
                    logger.warning("could not mark session %s interrupted: %s", job.session_id, exc)
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # it finished this very moment
                job.future.set_exception(
                    PoolClosed(f"the server shut down before session {job.session_id} finished; it is marked "
                               "interrupted")
                )
        with self._lock:
            self._interrupted.extend(marked)
        return marked

    def shutdown(self, wait_s: float = 30.0) -> list[str]:
        """Take no more work; wait up to ``wait_s`` for running sessions (no longer than a grace period already
        given to :meth:`stop_admitting`); mark the rest interrupted.

        Returns the ids of every session marked interrupted. Queued jobs that never started are refused.
        """
        self.stop_admitting()
        for _ in self._workers:
            self._queue.put(None)
        deadline = time.monotonic() + wait_s
        if self._interrupt_at is not None:
            deadline = min(deadline, self._interrupt_at)
        for worker in self._workers:
            assert worker.thread is not None
            worker.thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self.interrupt_running()
        with self._lock:
            return list(self._interrupted)

    @staticmethod
    def _mark_interrupted(store: Any, session_id: str) -> None:
        session = store.session(session_id)
        if session.get("status") != "running":
            return  # it finished in the meantime
        store.finish_session(
            session_id,
            output_type=None,
            verdict=None,
            answer="",
            rounds=session.get("rounds") or 0,
            groundedness_score=None,
            error=INTERRUPTED_ERROR,
            status="interrupted",
        )

    def close(self) -> None:
        """Close the workers' audit stores (after :meth:`shutdown`)."""
        closed: set[int] = set()
        for worker in self._workers:
            store = getattr(worker.program, "store", None)
            if store is not None and id(store) not in closed and hasattr(store, "close"):
                closed.add(id(store))
                store.close()
