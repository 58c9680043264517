"""Session liveness: who runs a session, a heartbeat while it runs, and what a store does on open with sessions
whose owner is gone.

A process that is killed (-9, the OOM killer, a power cut) cannot mark its sessions, which would stay ``running``
forever. So each session row records its owner (host, pid, and a start token: boot id, pid namespace and the
process's start time, which tells a reused pid from the owner) and a heartbeat the owning store refreshes every
:data:`HEARTBEAT_SECONDS`. A store opened read-write checks every ``running`` session:

- owner on this machine (same host name, boot and pid namespace): gone if its pid is not alive, is a zombie, or
  is another process now (different start time) - decided from the kernel, at once;
- owner elsewhere, or not recorded (rows from before migration 0002): gone if no heartbeat for
  :data:`STALE_AFTER_SECONDS` (another machine's processes cannot be inspected, its heartbeat can).

A gone owner's session is marked ``interrupted`` with the reason, by one conditional UPDATE that applies only if
the row is still ``running`` with the heartbeat that was read: a session whose owner beat or finished meanwhile is
never touched, and neither is a live session of another process.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0
"""How often the owning store refreshes ``heartbeat_at`` of its running sessions."""

STALE_AFTER_SECONDS = 300.0
"""A session of another machine whose heartbeat is older than this is taken as abandoned (20 missed beats)."""

_PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    """A process that runs sessions: host name, pid, and its start token (``None`` where /proc is missing)."""

    host: str
    pid: int
    started: str | None

    @property
    def machine(self) -> str | None:
        """Boot id and pid namespace: pids are comparable only between owners that share them."""
        return self.started.rsplit("/", 1)[0] if self.started else None


def start_token(pid: int) -> str | None:
    """``boot_id/pid-namespace/start-ticks`` of a live process, or ``None`` if it does not exist (or is a zombie)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
        boot = (_PROC / "sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        namespace = os.readlink(_PROC / str(pid) / "ns/pid")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the command name may hold spaces and parentheses
    if len(fields) < 20 or fields[0] in ("Z", "X"):  # a zombie or dead process is not a live owner
        return None
    return f"{boot}/{namespace}/{fields[19]}"  # field 22 of proc(5): start time in clock ticks since boot


def this_process() -> Owner:
    """The owner this process writes into the sessions it starts (computed per pid: a forked child differs)."""
    pid = os.getpid()
    cached = _OWNER.get(pid)
    if cached is None:
        cached = _OWNER[pid] = Owner(socket.gethostname(), pid, start_token(pid))
    return cached


_OWNER: dict[int, Owner] = {}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except (OverflowError, ValueError):
        return False
    return True


def why_gone(row: dict[str, Any], me: Owner, now: datetime) -> str | None:
    """Why the owner of a ``running`` session row is gone, or ``None`` if it may be alive."""
    host, pid, started = row.get("owner_host"), row.get("owner_pid"), row.get("owner_started")
    recorded = Owner(host, pid, started) if host is not None and pid is not None else None
    if recorded is not None and recorded.host == me.host and recorded.machine == me.machine:
        if recorded == me:
            return None  # this very process: its own sessions are alive
        if me.machine is None:  # no /proc: a pid can only be tested for existence
            return None if _pid_alive(pid) else f"its process {pid} on {host} is gone"
        current = start_token(pid)
        if current is None:
            return f"its process {pid} on {host} is gone"
        if started is not None and current != started:
            return f"its process {pid} on {host} is gone (the pid now belongs to another process)"
        return None
    last = row.get("heartbeat_at") or row.get("created_at")
    if last is None or now - last <= timedelta(seconds=STALE_AFTER_SECONDS):
        return None
    who = f"its process {pid} on {host}" if recorded is not None else "its process (not recorded)"
    return f"{who} sent no heartbeat for {(now - last).total_seconds():.0f} s"


def interrupt_orphans(read: Callable[[], list[dict[str, Any]]], interrupt: Callable[[list[Any]], bool],
                      now: datetime) -> list[str]:
    """Mark each ``running`` session (``read()``) whose owner is gone: ``interrupt([now, error, session_id,
    heartbeat_at as read])`` applies only to a row still so; returns the ids it marked."""
    me, marked = this_process(), []
    for row in read():
        why = why_gone(row, me, now)
        if why is not None and interrupt(
            [now, f"interrupted: {why} (found when the audit store was opened)", row["session_id"], row["heartbeat_at"]]
        ):
            marked.append(row["session_id"])
    return marked


_LIVE_HEARTBEATS: weakref.WeakSet[Heartbeat] = weakref.WeakSet()
EXIT_JOIN_S = 5.0


def _stop_heartbeats_at_exit() -> None:
    """A beat is a write into the store's C++ code: the interpreter must not finish while a daemon thread is in it
    (the process would abort), so exit stops every heartbeat and waits briefly for a beat under way."""
    for heartbeat in list(_LIVE_HEARTBEATS):
        heartbeat.stop(join_s=EXIT_JOIN_S)


atexit.register(_stop_heartbeats_at_exit)


class Heartbeat:
    """A daemon thread that refreshes ``heartbeat_at`` of the sessions one store has running."""

    def __init__(self, beat: Any, interval: float | None = None) -> None:
        self._beat, self._interval = beat, interval if interval is not None else HEARTBEAT_SECONDS
        self._sessions: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        _LIVE_HEARTBEATS.add(self)

    def add(self, session_id: str) -> None:
        with self._lock:
            self._sessions.add(session_id)
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="evigate-heartbeat", daemon=True)
                self._thread.start()

    def discard(self, session_id: str) -> None:
        with self._lock:
            self._sessions.discard(session_id)

    def stop(self, join_s: float = 0.0) -> None:
        self._stop.set()
        thread = self._thread
        if join_s > 0 and thread is not None and thread is not threading.current_thread():
            thread.join(join_s)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                sessions = list(self._sessions)
            for session_id in sessions:
                try:
                    self._beat(session_id)
                except Exception as exc:  # a missed beat is harmless: the next one comes, and the bound is 20 beats
                    logger.warning("heartbeat of session %s failed: %s", session_id, exc)
