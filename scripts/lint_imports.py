"""Run import-linter's contracts (pyproject [tool.importlinter]) over the checkout.

The checkout maps top-level folders to `evigate.<folder>` (pyproject package-dir), which import-linter cannot
follow, so this script lays the package out as installed — a tree of symlinks in a temporary folder — and runs
`lint-imports` with that tree first on the path. Exit status is lint-imports'.

    python scripts/lint_imports.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_tree(target: Path) -> Path:
    """`target/evigate` as the wheel would install it, made of symlinks into the checkout."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    package = target / "evigate"
    package.mkdir(parents=True)
    for entry in (ROOT / mapping["evigate"]).iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in mapping.items():
        if name != "evigate":
            (target / name.replace(".", "/")).symlink_to(ROOT / folder, target_is_directory=True)
    return target


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="evigate-imports-") as tmp:
        tree = package_tree(Path(tmp))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
        lint = Path(sys.executable).with_name("lint-imports")
        command = [str(lint)] if lint.exists() else [sys.executable, "-m", "importlinter.cli"]
        return subprocess.run([*command, str(ROOT / "pyproject.toml"), "--no-cache"], env=env,
                              cwd=tmp).returncode


if __name__ == "__main__":
    sys.exit(main())
