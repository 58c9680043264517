"""`evigate serve` over real HTTP: results, SSE progress, the audit chain, auth, limits, queue, shutdown."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evigate.cli.app import main
from evigate.errors import ConfigError
from evigate.serve.runner import check_address, is_loopback
from evigate.store import AuditStore
from tests.serve.conftest import QUERY

TOKEN = "s3cret-token"


def wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = [line for line in block.splitlines() if not line.startswith(":")]
        if not lines:
            continue
        name = next(line[len("event: ") :] for line in lines if line.startswith("event: "))
        data = next(line[len("data: ") :] for line in lines if line.startswith("data: "))
        events.append((name, json.loads(data)))
    return events


def test_a_diagnosis_returns_the_result_and_its_session_is_the_show_json_audit_chain(
    start_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        response = client.post("/v1/diagnoses", json={"query": QUERY, "locale": "en"})
        assert response.status_code == 200, response.text
        result = response.json()
        assert result["verdict"] == "PASS" and result["output_type"] == "NORMAL" and result["answer"]
        chain = client.get(f"/v1/sessions/{result['session_id']}")
        assert chain.status_code == 200
        assert client.get("/v1/sessions/no-such-session").status_code == 404
        docs = client.get("/docs")
        assert docs.status_code == 200 and "cdn" not in docs.text.lower()  # no asset from outside this server
        assert client.get("/docs-assets/swagger-ui-bundle.js").status_code == 200
        assert "/v1/diagnoses" in client.get("/openapi.json").json()["paths"]
    record = chain.json()
    assert record["session"]["settings"]["locale"] == "en"  # the request's locale, for this session only
    assert [step["agent"] for step in record["agent_steps"]][:2] == ["planner", "executor"]
    contributions = record["session"]["self_evaluation"]["contributions"]  # what each agent contributed (issue 18)
    assert [entry["round"] for entry in contributions["rounds"]] == [1]
    assert contributions["composer"]["status"] in ("shown", "replaced")
    server.stop()
    server.pool.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["show", result["session_id"], "--json", "--database", str(server.database)])
    assert exit_info.value.code in (0, None)
    assert json.loads(capsys.readouterr().out) == record


def test_progress_arrives_as_server_sent_events_in_stage_order_then_the_result(start_server: Any) -> None:
    server = start_server()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.post("/v1/diagnoses?stream=true", json={"query": QUERY})
        by_accept = client.post("/v1/diagnoses", json={"query": QUERY}, headers={"Accept": "text/event-stream"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[0] == "queued" and names[1] == "session_started" and names[-1] == "result"
    stages = [(name, data["stage"]) for name, data in events if name.startswith("stage_")]
    assert stages == [
        (kind, stage) for stage in ("planner", "executor", "gatekeeper", "verifier", "composer")
        for kind in ("stage_started", "stage_finished")
    ]
    session_id = events[1][1]["session_id"]
    assert all(data["session_id"] == session_id for name, data in events[1:])
    assert all(data["round"] == 1 for name, data in events if name.startswith("stage_"))
    elapsed = [data["elapsed_s"] for name, data in events[1:-1]]
    assert elapsed == sorted(elapsed)
    assert all(data["ok"] is True for name, data in events if name == "stage_finished")
    tools = [(data["tool"], data["invocation_id"], data["ok"]) for name, data in events if name == "tool_call"]
    assert tools and all(invocation_id is not None and ok for _, invocation_id, ok in tools)  # the executor's calls
    assert events[-1][1]["verdict"] == "PASS"
    assert sse_events(by_accept.text)[-1][0] == "result"


def test_a_second_round_shows_in_the_events_round_numbers(start_server: Any) -> None:
    server = start_server(verdicts={"claim-1": "unsupported", "claim-2": "unsupported"})
    with httpx.Client(base_url=server.url, timeout=30) as client:
        events = sse_events(client.post("/v1/diagnoses?stream=true", json={"query": QUERY}).text)
    rounds = [(data["round"], data["stage"]) for name, data in events if name == "stage_started"]
    assert rounds[:4] == [(1, "planner"), (1, "executor"), (1, "gatekeeper"), (1, "verifier")]
    assert (2, "planner") in rounds and rounds.index((2, "planner")) == 4
    assert events[-1][0] == "result" and events[-1][1]["rounds"] == 2


class _BrokenProgram:
    """A program whose infrastructure fails: what the API does when the store or the world is gone."""

    settings = None
    store = None

    def __call__(self, query: str, observer: Any = None) -> Any:  # (the observer hears nothing: it fails first)
        from evigate.errors import StoreError

        raise StoreError("audit database /srv/evigate.duckdb: disk I/O error")


def test_a_failing_program_is_a_500_with_a_message_and_the_worker_lives_on(start_server: Any) -> None:
    server = start_server(workers=1, factory=_BrokenProgram)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for _ in range(2):  # the same worker answers again
            failed = client.post("/v1/diagnoses", json={"query": QUERY})
            assert failed.status_code == 500
            assert failed.json() == {"error": "diagnosis failed (StoreError): audit database /srv/evigate.duckdb: "
                                              "disk I/O error"}
        events = sse_events(client.post("/v1/diagnoses?stream=true", json={"query": QUERY}).text)
    assert events[0][0] == "queued" and events[-1][0] == "error" and "disk I/O error" in events[-1][1]["error"]


def test_a_token_is_required_on_the_api_but_not_on_health(start_server: Any) -> None:
    server = start_server(token=TOKEN)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/healthz").status_code == 200
        missing = client.post("/v1/diagnoses", json={"query": QUERY})
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
        wrong = client.post("/v1/diagnoses", json={"query": QUERY}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        good = client.post("/v1/diagnoses", json={"query": QUERY}, headers={"Authorization": f"Bearer {TOKEN}"})
        assert good.status_code == 200
        session_id = good.json()["session_id"]
        assert client.get(f"/v1/sessions/{session_id}").status_code == 401
        authed = client.get(f"/v1/sessions/{session_id}", headers={"Authorization": f"Bearer {TOKEN}"})
        assert authed.status_code == 200


def test_oversized_and_invalid_requests_are_refused_before_any_session(start_server: Any) -> None:
    server = start_server(max_body_bytes=2048)
    big = {"query": "订单 123 " + "x" * 4000}
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.post("/v1/diagnoses", json=big).status_code == 413

        def chunks() -> Any:  # no Content-Length: the limit counts the bytes as they arrive
            for _ in range(10):
                yield b"x" * 1000

        chunked = client.post("/v1/diagnoses", content=chunks(), headers={"Content-Type": "application/json"})
        assert chunked.status_code == 413
        assert client.post("/v1/diagnoses", json={"query": "   "}).status_code == 422
        assert client.post("/v1/diagnoses", json={"query": QUERY, "locale": "fr"}).status_code == 422
        assert client.post("/v1/diagnoses", json={"query": QUERY, "extra": 1}).status_code == 422
        assert client.post("/v1/diagnoses", content=b"{not json", headers={"Content-Type": "application/json"}
                           ).status_code == 400
    with AuditStore(server.database) as store:  # nothing above started a session
        assert store.sessions(limit=5) == [] or all(s["query"] == QUERY for s in store.sessions(limit=5))


def test_past_the_queue_the_server_answers_503_at_once(start_server: Any) -> None:
    server = start_server(workers=1, queue_size=1, sleep_s=1.5)
    responses: dict[str, httpx.Response] = {}

    def post(name: str) -> None:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            responses[name] = client.post("/v1/diagnoses", json={"query": QUERY})

    first = threading.Thread(target=post, args=("running",))
    first.start()
    wait_until(lambda: server.pool.load()["running"] == 1)
    second = threading.Thread(target=post, args=("queued",))
    second.start()
    wait_until(lambda: server.pool.load()["queued"] == 1)
    started = time.perf_counter()
    post("refused")
    assert time.perf_counter() - started < 1.0  # refused at once, not after waiting for a worker
    assert responses["refused"].status_code == 503 and responses["refused"].headers["retry-after"]
    first.join()
    second.join()
    assert responses["running"].status_code == 200 and responses["queued"].status_code == 200


def test_shutdown_lets_a_running_session_finish_and_refuses_what_never_started(start_server: Any) -> None:
    server = start_server(workers=1, queue_size=2, sleep_s=1.0, graceful_s=20)
    responses: dict[str, httpx.Response] = {}

    def post(name: str) -> None:
        responses[name] = httpx.post(f"{server.url}/v1/diagnoses", json={"query": f"{QUERY} {name}"}, timeout=30)

    running = threading.Thread(target=post, args=("running",))
    running.start()
    wait_until(lambda: server.pool.load()["running"] == 1)
    queued = threading.Thread(target=post, args=("queued",))
    queued.start()
    wait_until(lambda: server.pool.load()["queued"] == 1)
    server.stop()
    running.join()
    queued.join()
    assert responses["running"].status_code == 200
    assert responses["queued"].status_code == 503 and "before this request started" in responses["queued"].text
    with AuditStore(server.database) as store:
        assert store.session(responses["running"].json()["session_id"])["status"] == "finished"
        assert all(not s["query"].endswith("queued") for s in store.sessions(limit=50))


def test_shutdown_marks_a_session_that_outlives_the_grace_period_interrupted(start_server: Any) -> None:
    server = start_server(workers=1, sleep_s=8.0, graceful_s=1, shutdown_wait_s=0.2)
    events: list[str] = []

    def stream() -> None:
        try:
            with httpx.stream("POST", f"{server.url}/v1/diagnoses?stream=true", json={"query": QUERY},
                              timeout=30) as response:
                events.extend(line for line in response.iter_lines() if line.startswith("data: "))
        except httpx.HTTPError:
            pass

    thread = threading.Thread(target=stream)
    thread.start()
    wait_until(lambda: any("session_id" in line for line in events) and server.pool.load()["running"] == 1)
    session_id = next(json.loads(line[len("data: ") :])["session_id"] for line in events if "session_id" in line)
    started = time.perf_counter()
    server.stop()
    assert server.stopped and time.perf_counter() - started < 6
    session = server.pool.store.session(session_id)
    assert session["status"] == "interrupted" and "shut down" in session["error"]
    thread.join(timeout=10)


def test_serve_refuses_a_non_loopback_address_without_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.internal")
    with pytest.raises(ConfigError, match="EVIGATE_API_TOKEN"):
        check_address("0.0.0.0", None)
    check_address("0.0.0.0", TOKEN)
    monkeypatch.delenv("EVIGATE_API_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--host", "0.0.0.0", "--database", str(tmp_path / "x.duckdb")])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "EVIGATE_API_TOKEN" in captured.out + captured.err and "Traceback" not in captured.out + captured.err
    assert not (tmp_path / "x.duckdb").exists()  # refused before anything was opened
