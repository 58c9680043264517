"""A real uvicorn server on 127.0.0.1 (free port) over a pool of programs with scripted agents."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evigate.modules.program import DiagnosisProgram
from evigate.optimize.ui import free_port
from evigate.serve.app import ServeOptions, create_app
from evigate.serve.limits import HEADER_TIMEOUT_S, MAX_CONNECTIONS
from evigate.serve.pool import DiagnosisPool
from evigate.serve.runner import ThreadedServer, shutdown_hook
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
from tests.modules.test_program_routing import good_claims

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
CONFIRMED = {"claim-1": "direct_observation", "claim-2": "direct_observation"}


def scripted_factory(
    database: Path, *, sleep_s: float = 0.0, verdicts: dict[str, str] | None = None
) -> Callable[[], DiagnosisProgram]:
    def build() -> DiagnosisProgram:
        return DiagnosisProgram.from_settings(
            database=database,
            planner=ScriptedPlanner(),
            executor=ScriptedExecutor(good_claims, sleep_s=sleep_s),
            verifier=ScriptedVerifier(verdicts or CONFIRMED),
            composer=ScriptedComposer(),
        )

    return build


@pytest.fixture()
def start_server(private_world: Path) -> Iterator[Callable[..., ThreadedServer]]:
    """``start_server(workers=, queue_size=, sleep_s=, verdicts=, factory=, graceful_s=, max_connections=,
    header_timeout_s=, **ServeOptions)``."""
    started: list[tuple[ThreadedServer, DiagnosisPool]] = []

    def start(
        *,
        workers: int = 2,
        queue_size: int = 4,
        sleep_s: float = 0.0,
        graceful_s: float = 5.0,
        factory: Callable[[], Any] | None = None,
        verdicts: dict[str, str] | None = None,
        max_connections: int = MAX_CONNECTIONS,
        header_timeout_s: float = HEADER_TIMEOUT_S,
        **options: Any,
    ) -> ThreadedServer:
        factory = factory or scripted_factory(private_world, sleep_s=sleep_s, verdicts=verdicts)
        pool = DiagnosisPool(factory, workers=workers, queue_size=queue_size)
        app = create_app(pool, ServeOptions(**options))
        server = ThreadedServer(app, port=free_port(), graceful_s=graceful_s, on_exit=shutdown_hook(pool, graceful_s),
                                max_connections=max_connections, header_timeout_s=header_timeout_s)
        server.start()
        server.pool = pool  # type: ignore[attr-defined]
        server.database = private_world  # type: ignore[attr-defined]
        started.append((server, pool))
        return server

    yield start
    for server, pool in started:
        if not server.stopped:
            server.stop()
        pool.close()
