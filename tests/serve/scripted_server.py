"""`evigate serve` as a process, with scripted (optionally slow) agents instead of a model:
``python -m tests.serve.scripted_server DATABASE PORT --workers 1 --queue 2 --graceful 3 --sleep 30``.

It runs exactly what the CLI runs (:func:`evigate.serve.runner.serve_pool`, uvicorn's signal handling in the main
thread), so a test can send it SIGTERM; only the program factory differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evigate.serve.app import ServeOptions
from evigate.serve.limits import MAX_CONNECTIONS
from evigate.serve.pool import DiagnosisPool
from evigate.serve.runner import serve_pool
from tests.serve.conftest import scripted_factory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("database", type=Path)
    parser.add_argument("port", type=int)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--queue", type=int, default=2)
    parser.add_argument("--graceful", type=float, default=3.0)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--max-connections", type=int, default=MAX_CONNECTIONS)
    args = parser.parse_args(argv)
    pool = DiagnosisPool(scripted_factory(args.database, sleep_s=args.sleep), workers=args.workers,
                         queue_size=args.queue)
    options = ServeOptions(shutdown_wait_s=min(5.0, args.graceful))
    print(f"serving on {args.port}", file=sys.stderr, flush=True)
    started = serve_pool(pool, options, host="127.0.0.1", port=args.port, graceful_s=args.graceful,
                         log=lambda line: print(line, file=sys.stderr, flush=True),
                         max_connections=args.max_connections)
    return 0 if started else 2


if __name__ == "__main__":
    sys.exit(main())
