"""At interpreter exit no daemon thread of the store may be inside DuckDB's C++ code (the process would abort with
"terminate called … FATAL: exception not rethrown", exit 134, seen intermittently at the end of test runs): idle
files are closed on the exiting thread, and heartbeats are stopped and joined."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from evigate.store.liveness import Heartbeat


def test_a_process_that_ends_inside_the_linger_closes_its_files_on_the_main_thread(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import threading
        from evigate.store import AuditStore
        from evigate.store import duck
        closed_on = []
        original = duck._close_if_idle
        def spy(path, entry, idle_for):
            closed_on.append(threading.current_thread() is threading.main_thread())
            return original(path, entry, idle_for)
        duck._close_if_idle = spy
        store = AuditStore({str(tmp_path / "a.duckdb")!r})
        store.start_session("q", settings={{}})
        duck.LINGER_SECONDS = 60.0   # the daemon closer would come long after exit
        store.start_session("q2", settings={{}})
        duck.close_idle_files_at_exit()
        assert not [p for p, e in duck._FILES.items() if e.connection is not None], duck._FILES
        assert closed_on and closed_on[-1] is True, closed_on
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_stopping_a_heartbeat_at_exit_waits_for_a_beat_under_way() -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def beat(_: str) -> None:
        started.set()
        release.wait(2)
        finished.set()

    heartbeat = Heartbeat(beat, interval=0.01)
    heartbeat.add("s1")
    assert started.wait(5)
    threading.Timer(0.2, release.set).start()
    heartbeat.stop(join_s=5)
    assert finished.is_set()
