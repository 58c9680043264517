"""The MLflow UI launcher: a foreign server on the port, an early exit, and SIGHUP (issue 13, item 17)."""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evigate.errors import EvigateError
from evigate.optimize.ui import MlflowUI, free_port, group_members
from tests.servers import wait_http


class _Healthy(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"OK")

    def log_message(self, *_: object) -> None:
        pass


def test_a_server_already_on_the_port_is_refused_not_taken_for_ours(tmp_path: Path) -> None:
    foreign = http.server.HTTPServer(("127.0.0.1", 0), _Healthy)
    threading.Thread(target=foreign.serve_forever, daemon=True).start()
    try:
        ui = MlflowUI(f"sqlite:///{tmp_path / 'mlruns.db'}", port=foreign.server_address[1])
        with pytest.raises(EvigateError, match="already in use"):
            ui.start(timeout=10)
        assert ui.process is None and not ui.healthy()
    finally:
        foreign.shutdown()
        foreign.server_close()


def test_an_early_exit_quotes_the_servers_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ui = MlflowUI(f"sqlite:///{tmp_path / 'mlruns.db'}", port=0)
    crash = "import sys; sys.stderr.write('Error: backend store is broken\\n'); sys.exit(3)"
    monkeypatch.setattr(ui, "command", lambda: [sys.executable, "-c", crash])
    with pytest.raises(EvigateError) as failure:
        ui.start(timeout=20)
    message = str(failure.value)
    assert "code 3" in message and "backend store is broken" in message and "None" not in message
    assert ui.log_file is not None and ui.log_file.is_file()  # the log the message points at is kept
    ui.log_file.unlink()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to inspect the server's process group")
@pytest.mark.skipif(shutil.which("evigate") is None and not Path(sys.executable).with_name("evigate").exists(),
                    reason="the evigate console script is not installed")
def test_sighup_stops_the_server_and_frees_the_port(tmp_path: Path) -> None:
    port = free_port()
    script = shutil.which("evigate") or str(Path(sys.executable).with_name("evigate"))
    log = tmp_path / "ui.log"
    with log.open("wb") as sink:
        cli = subprocess.Popen([script, "ui", "--port", str(port), "--tracking-uri", f"sqlite:///{tmp_path}/mlruns.db"],
                               stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", cli, log, seconds=120, name="evigate ui")
        server_groups = {os.getpgid(pid) for pid in _children(cli.pid)}
        assert server_groups, "the mlflow server should be running"
        cli.send_signal(signal.SIGHUP)
        cli.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(group_members(g) for g in server_groups) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert all(group_members(g) == [] for g in server_groups)
        assert free_port_is(port)
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def free_port_is(port: int) -> bool:
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0
