"""A small real OpenAI-compatible HTTP server on 127.0.0.1 for tests: it records every request it gets.

It answers `POST /v1/chat/completions` the way a model server would, or misbehaves on purpose: ``garbage``
(200 with a body that is no JSON), ``slow`` (answers after ``delay`` seconds), ``error`` (HTTP 500). It is a
real server on a real socket, so litellm's whole client path runs; it is used where a misbehaving server is the
point, or where only the request matters (llama_cpp.server is the real model server of the model_server tests).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ChatServer:
    def __init__(self, mode: str = "answer", *, content: str | Callable[[dict[str, Any]], str] = "{}",
                 delay: float = 0.0) -> None:
        self.mode, self.content, self.delay = mode, content, delay
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models, as clients probe it
                self._send(200, json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if server.mode == "slow":
                    time.sleep(server.delay)
                if server.mode == "garbage":
                    self._send(200, "<html>certainly not JSON \x00\x01 ]]}", "text/html")
                elif server.mode == "error":
                    self._send(500, json.dumps({"error": {"message": "model crashed", "type": "server_error"}}))
                else:
                    self._send(200, json.dumps(server.completion(body)))

            def _send(self, status: int, text: str, kind: str = "application/json") -> None:
                data = text.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.api_base = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.content(body) if callable(self.content) else self.content
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
