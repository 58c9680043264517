"""`evigate ui`: the MLflow UI on 127.0.0.1, and every process it started gone after it stops."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from evigate.optimize.ui import MlflowUI, free_port, group_members
from tests.servers import wait_http


def _processes_mentioning(marker: str) -> list[int]:
    """Live pids whose command line or environment mentions ``marker`` (our unique tmp store path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            blob = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if state != "Z" and marker.encode() in blob:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to inspect the server's process group")
def test_ui_serves_on_localhost_and_stops_its_whole_process_group(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    ui = MlflowUI(uri, port=0)
    assert ui.url.startswith("http://127.0.0.1:") and "--host" in ui.command() and "127.0.0.1" in ui.command()
    with ui:
        with urllib.request.urlopen(f"{ui.url}/health", timeout=5) as response:
            assert response.status == 200
        assert ui.process is not None
        pgid = ui.process.pid
        members = group_members(pgid)
        assert pgid in members and len(members) >= 2  # the mlflow CLI and its uvicorn server (job runner is off)
    assert group_members(pgid) == []
    assert not ui.healthy()


@pytest.mark.skipif(shutil.which("evigate") is None and not Path(sys.executable).with_name("evigate").exists(),
                    reason="the evigate console script is not installed")
def test_evigate_ui_command_cleans_up_on_sigterm(tmp_path: Path) -> None:
    store = tmp_path / "uistore"
    port = free_port()
    script = shutil.which("evigate") or str(Path(sys.executable).with_name("evigate"))
    log = tmp_path / "ui.log"
    with log.open("wb") as sink:
        cli = subprocess.Popen([script, "ui", "--port", str(port), "--tracking-uri", f"sqlite:///{store}/mlruns.db"],
                               stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/health", cli, log, seconds=90, name="evigate ui")
        assert _processes_mentioning(str(store)), "the server should be running"
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=30) == 0
        deadline = time.monotonic() + 10
        while _processes_mentioning(str(store)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_mentioning(str(store)) == []
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
