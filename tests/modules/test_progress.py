"""Progress events reach the observer passed with a diagnosis, and only that diagnosis's events reach it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evigate.modules.progress import ProgressEvent
from tests.modules.scripted import ScriptedExecutor, ScriptedVerifier
from tests.modules.test_call_isolation import ALL_DIRECT, in_threads
from tests.modules.test_program_routing import build, good_claims


def test_two_sessions_in_threads_each_report_to_their_own_observer_only(world_db: Path) -> None:
    program = build(world_db, executor=ScriptedExecutor(good_claims, sleep_s=0.3),
                    verifier=ScriptedVerifier(ALL_DIRECT))
    queries = [f"订单 {oid} 支付失败，ERR_TIMEOUT 是什么原因？" for oid in ("123", "456")]
    events: dict[str, list[ProgressEvent]] = {query: [] for query in queries}
    results: dict[str, Any] = {}

    def ask(query: str) -> None:
        results[query] = program(query=query, observer=events[query].append)

    in_threads(ask, queries)
    for query, seen in events.items():
        assert {event.session_id for event in seen} == {results[query].session_id}
        assert seen[0].kind == "session_started" and seen[-1].kind == "stage_finished" and seen[-1].stage == "composer"
        tools = [event for event in seen if event.kind == "tool_call"]
        assert tools and all(event.round == 1 and event.stage == "executor" for event in tools)
        started = [event.stage for event in seen if event.kind == "stage_started"]
        assert started == ["planner", "executor", "gatekeeper", "verifier", "composer"]
    assert program(query=queries[0]).verdict == "PASS"  # and without an observer, nobody hears anything


def test_an_observer_that_raises_is_dropped_not_the_diagnosis(world_db: Path) -> None:
    heard: list[ProgressEvent] = []

    def broken(event: ProgressEvent) -> None:
        heard.append(event)
        raise OSError("the client went away")

    result = build(world_db, verifier=ScriptedVerifier(ALL_DIRECT))(query="订单 123 支付失败，ERR_TIMEOUT 是什么原因？",
                                                                     observer=broken)
    assert result.verdict == "PASS" and [event.kind for event in heard] == ["session_started"]
