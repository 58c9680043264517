"""Type-check the checkout with mypy, laid out as installed (the same symlink tree as scripts/lint_imports.py).

The deterministic core and the contracts (``rules/``, ``signatures/``) must check clean with no ``type: ignore``;
the rest is checked too, and its errors may not grow past the count recorded in pyproject
(``[tool.evigate.typecheck] max_other_errors``), which only ever goes down.

    python scripts/typecheck.py
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from lint_imports import ROOT, package_tree

STRICT = ("rules", "signatures")


def _mypy(tree: Path, targets: list[str]) -> tuple[int, str]:
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *targets]
    result = subprocess.run(command, cwd=tree, capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def _ignores(folder: str) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"#\s*type:\s*ignore", line)
    ]


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    budget = int(config["tool"]["evigate"]["typecheck"]["max_other_errors"])
    ignored = [where for folder in STRICT for where in _ignores(folder)]
    if ignored:
        print("type: ignore is not allowed in " + ", ".join(STRICT) + ": " + ", ".join(ignored))
        return 1
    with tempfile.TemporaryDirectory(prefix="evigate-mypy-") as tmp:
        tree = package_tree(Path(tmp))
        code, output = _mypy(tree, [f"evigate/{folder}" for folder in STRICT])
        if code != 0:
            print(output)
            return code
        _, output = _mypy(tree, ["evigate"])
    errors = [line for line in output.splitlines() if ": error:" in line]
    others = [line for line in errors if not any(line.startswith(f"evigate/{folder}/") for folder in STRICT)]
    print(f"mypy: {', '.join(STRICT)} clean; {len(others)} errors elsewhere (at most {budget})")
    if len(others) > budget:
        print("\n".join(others))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
