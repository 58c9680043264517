"""Bounded loopback load: 50 requests at concurrency 10 against a real server with scripted agents."""

from __future__ import annotations

import concurrent.futures
from typing import Any

import httpx

from evigate.store import AuditStore
from tests.serve.conftest import QUERY

REQUESTS, CONCURRENCY = 50, 10


def test_fifty_requests_at_concurrency_ten_are_all_answered(start_server: Any) -> None:
    server = start_server(workers=4, queue_size=CONCURRENCY)
    limits = httpx.Limits(max_connections=CONCURRENCY)
    with httpx.Client(base_url=server.url, timeout=120, limits=limits) as client:
        def one(index: int) -> httpx.Response:
            return client.post("/v1/diagnoses", json={"query": f"{QUERY} #{index}"})

        with concurrent.futures.ThreadPoolExecutor(CONCURRENCY) as pool:
            responses = list(pool.map(one, range(REQUESTS)))
    assert [r.status_code for r in responses] == [200] * REQUESTS
    results = [r.json() for r in responses]
    assert len({r["session_id"] for r in results}) == REQUESTS
    server.stop()
    server.pool.close()
    with AuditStore(server.database, read_only=True) as store:
        for index, result in enumerate(results):
            session = store.session(result["session_id"])
            assert session["status"] == "finished" and session["query"] == f"{QUERY} #{index}"
            assert {inv.session_id for inv in store.invocations(result["session_id"])} == {result["session_id"]}
