"""A small Chrome DevTools Protocol client: Debian's headless Chromium driven over its debugging websocket.

Just what the workbench tests need — navigate, run JavaScript, press keys, set the viewport, take screenshots,
record request URLs and headers — over ``websockets``' synchronous client. Nothing is downloaded: the browser
is the system's ``chromium`` (apt), the client is this file.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-port=0", "--remote-allow-origins=*")
_LISTENING = re.compile(r"DevTools listening on (ws://[^\s]+)")


class Browser:
    """``with Browser(profile) as page: page.goto(url); page.js("document.title")``."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 900) -> None:
        assert CHROMIUM is not None, "chromium is not installed"
        profile.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.console: list[str] = []
        self.requests: list[dict[str, Any]] = []
        browser_url = self._wait_for_devtools()
        port = browser_url.split(":")[2].split("/")[0]
        self._stack = contextlib.ExitStack()
        self.socket = self._stack.enter_context(
            connect(self._page_socket(port), max_size=64 * 1024 * 1024, open_timeout=20))
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable")
        self.viewport(width, height)

    def _wait_for_devtools(self, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        assert self.process.stderr is not None
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            match = _LISTENING.search(line)
            if match:
                return match.group(1)
            if not line and self.process.poll() is not None:
                break
        raise RuntimeError("chromium did not open its DevTools port")

    @staticmethod
    def _page_socket(port: str) -> str:
        for _ in range(100):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
                pages = [t for t in json.load(response) if t.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
            time.sleep(0.1)
        raise RuntimeError("chromium has no page")

    # -- protocol ---------------------------------------------------------------------------------------------

    def send(self, method: str, timeout: float = 60.0, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message_id = self._next_id
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        self.events.append(message)
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Runtime.exceptionThrown":
            self.console.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Network.requestWillBeSent":
            request = params["request"]
            self.requests.append({"url": request["url"], "headers": request.get("headers", {})})

    def pump(self, seconds: float = 0.05) -> None:
        """Read the events that arrived (a page's requests and console) without sending anything."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._event(json.loads(self.socket.recv(timeout=max(0.01, deadline - time.monotonic()))))
            except TimeoutError:
                return

    # -- what tests call ----------------------------------------------------------------------------------------

    def goto(self, url: str, timeout: float = 30.0) -> None:
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", timeout)

    def js(self, expression: str, timeout: float = 60.0) -> Any:
        result = self.send("Runtime.evaluate", timeout, expression=expression, returnByValue=True,
                           awaitPromise=True, userGesture=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"not reached in {timeout} s: {expression}; console: {self.console[-5:]}")
            self.pump(0.1)

    def press(self, key: str, code: str | None = None, text: str | None = None, shift: bool = False) -> None:
        """A real key press (keyDown + keyUp), as a keyboard user makes it."""
        windows_codes = {"Tab": 9, "Enter": 13, "Escape": 27, " ": 32}
        common = {"key": key, "code": code or key, "windowsVirtualKeyCode": windows_codes.get(key, 0),
                  "modifiers": 8 if shift else 0}
        self.send("Input.dispatchKeyEvent", type="keyDown", **common, **({"text": text} if text else {}))
        self.send("Input.dispatchKeyEvent", type="keyUp", **common)

    def type_text(self, text: str) -> None:
        self.send("Input.insertText", text=text)

    def viewport(self, width: int, height: int = 900) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=width < 600)
        self.size = (width, height)

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """The viewport, or the whole page: the screen is made as tall as the page first, since what a page marks
        ``content-visibility: auto`` is painted only on screen (a capture beyond the viewport shows it blank)."""
        width, height = self.size
        if full_page:
            for _ in range(5):  # what comes on screen takes its real size: the page's height may change
                page_height = self.js("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame("
                                      "() => done(document.documentElement.scrollHeight))))")
                if page_height == self.size[1]:
                    break
                self.viewport(width, max(height, page_height))
        data = self.send("Page.captureScreenshot", format="png")["data"]
        if self.size != (width, height):
            self.viewport(width, height)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
