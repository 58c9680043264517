"""The wheel, not just the editable checkout, holds every subpackage and its data files."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = [
    "evigate",
    "evigate.cli",
    "evigate.llm",
    "evigate.signatures",
    "evigate.modules",
    "evigate.rules",
    "evigate.tools",
    "evigate.tools.connectors",
    "evigate.store",
    "evigate.datasets",
    "evigate.demo",
    "evigate.demo.tools",
    "evigate.domain",
    "evigate.optimize",
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # Built from a copy: setuptools keeps a build/ folder in the tree it builds, and a stale build/lib there ships
    # modules long deleted from the source (seen: an old rules/verdict/matrix.py beside its split).
    source = tmp_path_factory.mktemp("source") / "evigate"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache", "mlruns"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        cwd=out,
    )
    return next(out.glob("evigate-*.whl"))


def test_wheel_ships_package_data_and_no_top_level_folders(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_levels = {name.split("/", 1)[0] for name in names}
    folders = {"modules", "rules", "tools", "store", "signatures", "datasets", "optimize", "demo", "domain", "llm"}
    assert not top_levels & folders
    assert any(name.startswith("evigate/rules/") and name.endswith(".yaml") for name in names)
    assert any(name.startswith("evigate/store/") and name.endswith(".sql") for name in names)
    assert any(name.startswith("evigate/demo/") and name.endswith(".md") for name in names)
    assert "evigate/domain/starter/domain.yaml" in names and "evigate/domain/starter/logs/app.jsonl" in names
    # the Trace Workbench's templates and its own script and style (issue 20)
    assert {"evigate/serve/templates/base.html", "evigate/serve/templates/_session.html",
            "evigate/serve/static/workbench.js", "evigate/serve/static/session.js",
            "evigate/serve/static/workbench.css"} <= set(names)
    assert all(f"evigate/{part}/py.typed" in names for part in ("rules", "signatures", "modules"))
    assert "evigate/modules/compiled/manifest.json" in names  # the program shipped compiled (issue 19)


def test_wheel_installed_in_a_fresh_venv_imports_every_subpackage(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    # Dependencies come from the test environment as a plain path entry: its editable-install hooks (.pth files)
    # are not processed there, so only the wheel can provide `evigate`.
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    code = (
        "import importlib, pathlib, sys\n"
        f"for name in {SUBPACKAGES!r}:\n"
        "    module = importlib.import_module(name)\n"
        f"    assert pathlib.Path(module.__file__).is_relative_to({str(site)!r}), (name, module.__file__)\n"
        "from evigate.rules import Gatekeeper\n"
        "assert Gatekeeper.default().verdict_impacts\n"
        "print('ok')\n"
    )
    result = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("ok")


def test_every_module_in_the_wheel_is_one_of_the_source(wheel: Path) -> None:
    """No stale file from an old build: each evigate/….py in the wheel is a file of this checkout."""
    import tomllib

    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]

    def source_of(name: str) -> Path:
        parts = name.split("/")
        for depth in range(len(parts) - 1, 0, -1):  # the longest package mapped to a folder of its own
            folder = package_dir.get(".".join(parts[:depth]))
            if folder is not None:
                return ROOT / folder / "/".join(parts[depth:])
        return ROOT / name

    names = [name for name in zipfile.ZipFile(wheel).namelist() if name.startswith("evigate/") and name.endswith(".py")]
    assert len(names) > 50
    assert [name for name in names if not source_of(name).is_file()] == []
