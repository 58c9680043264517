"""Grounding benchmarks in one run: FaithBench (`verify`), HolmesGPT (entity coverage) and the demo world.

Each part is a script of its own with a `main(argv=None)`; this runner calls those present, in order, and passes
the remaining arguments to every one of them.

Run:  python bench/grounding.py [--only faithbench|holmesgpt|demo] [arguments for the parts, e.g. --limit 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = {
    "faithbench": "grounding_faithbench.py",
    "holmesgpt": "grounding_holmesgpt.py",
    "demo": "grounding_demo.py",
}


def _load_main(path: Path) -> Callable[[list[str]], int | None]:
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(PARTS), help="run one part only")
    args, rest = parser.parse_known_args(argv)
    chosen = [args.only] if args.only else list(PARTS)
    status = 0
    for name in chosen:
        path = HERE / PARTS[name]
        if not path.exists():
            print(f"== {name}: {path.name} is not in this checkout; skipped", flush=True)
            continue
        print(f"== {name}: python bench/{path.name} {' '.join(rest)}".rstrip(), flush=True)
        started = time.perf_counter()
        try:
            code = _load_main(path)(list(rest))
        except SystemExit as exit_:  # a part's argparse rejects an argument meant for another part
            code = exit_.code if isinstance(exit_.code, int) else 2
        print(f"== {name}: done in {time.perf_counter() - started:.1f} s (exit {code or 0})", flush=True)
        status = status or int(code or 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
