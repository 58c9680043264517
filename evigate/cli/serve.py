"""`evigate serve`: the HTTP API for chat front ends (see evigate/serve/app.py for the endpoints)."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console

from evigate.cli.app import app
from evigate.cli.terminal import print_error
from evigate.errors import EvigateError
from evigate.serve.limits import MAX_BODY_BYTES, MAX_CONNECTIONS, MAX_QUERY_CHARS

err = Console(stderr=True, soft_wrap=True)  # log lines: never wrapped mid-word


@app.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="bind address; off loopback EVIGATE_API_TOKEN is required"),
    port: int = typer.Option(8080, "--port", min=1, max=65535),
    workers: int = typer.Option(1, "--workers", min=1, help="sessions run at once (one program each)"),
    queue_size: int = typer.Option(8, "--queue", min=0, help="requests waiting for a worker; past it: 503"),
    max_body_kb: int = typer.Option(
        -(-MAX_BODY_BYTES // 1024), "--max-body-kb", min=1,
        help=f"request body limit; past it: 413 (the default fits a {MAX_QUERY_CHARS:,}-character query, escaped)",
    ),
    max_connections: int = typer.Option(
        MAX_CONNECTIONS, "--max-connections", min=1,
        help="open connections at most; past it the one stalling longest on its headers is shed (else 503)",
    ),
    graceful: float = typer.Option(30.0, "--graceful-seconds", min=0, help="on SIGTERM: wait this long for sessions"),
    settings: Path | None = typer.Option(None, "--settings", "-s", help="settings YAML"),
    database: str | None = typer.Option(None, "--database", "-d", help="DuckDB file or postgresql:// URL"),
    program_dir: Path | None = typer.Option(None, "--program", help="compiled program directory to load"),
) -> None:
    """Serve diagnoses over HTTP: POST /v1/diagnoses, GET /v1/sessions/{id}, GET /healthz, /docs."""
    from evigate.cli.diagnose import build_program
    from evigate.serve.app import ServeOptions
    from evigate.serve.pool import DiagnosisPool
    from evigate.serve.runner import TOKEN_ENV, check_address, reserve_descriptors, serve_pool

    token = os.environ.get(TOKEN_ENV) or None
    try:
        check_address(host, token)
        reserve_descriptors(max_connections)
        pool = DiagnosisPool(
            lambda: build_program(settings, database, program_dir), workers=workers, queue_size=queue_size
        )
    except EvigateError as exc:
        print_error(err, exc)
        raise typer.Exit(2) from None

    options = ServeOptions(token=token, max_body_bytes=max_body_kb * 1024, shutdown_wait_s=min(5.0, graceful))
    auth = "bearer token required" if token else "no auth (loopback only)"
    err.print(f"evigate serve on http://{host}:{port} · {workers} worker(s), queue {queue_size} · {auth} · /docs")
    if not serve_pool(pool, options, host=host, port=port, graceful_s=graceful, log=err.print,
                      max_connections=max_connections):
        print_error(err, f"could not serve on {host}:{port} (see the message above)")
        raise typer.Exit(2)
