"""Issue 22 finding 11: `evigate domain check` on hostile files: a FIFO in knowledge/ must not hang (it is skipped
and named), 10k-deep YAML is a config error with exit 2, and one non-UTF-8 document is skipped and named while
the rest of the knowledge source keeps working."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evigate.tools.retrieval import KnowledgeBase

DEEP = "[" * 10_000 + "]" * 10_000


def check(directory: Path) -> subprocess.CompletedProcess[str]:
    # A subprocess with a timeout: the old code blocked forever opening a FIFO, which must fail the test, not hang it.
    return subprocess.run([sys.executable, "-m", "evigate.cli", "domain", "check", str(directory)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "400"})


def test_a_fifo_in_knowledge_is_skipped_and_named(starter: Path) -> None:
    os.mkfifo(starter / "knowledge" / "checkout" / "pipe.md")
    done = check(starter)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pipe.md" in done.stdout and "FIFO" in done.stdout
    assert "2 documents" in done.stdout


def test_a_non_utf8_document_is_skipped_and_named_and_the_rest_still_answers(starter: Path) -> None:
    (starter / "knowledge" / "checkout" / "legacy.md").write_bytes("# Caf\xe9\n\nDB_POOL_TIMEOUT".encode("latin-1"))
    done = check(starter)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "legacy.md" in done.stdout and "not UTF-8" in done.stdout
    base = KnowledgeBase.from_directory(starter / "knowledge")
    assert set(base.skipped) == {"checkout/legacy.md"}
    assert base.search("DB_POOL_TIMEOUT")  # the readable documents are still searched


def test_deep_yaml_in_domain_yaml_is_a_config_error_with_exit_2(starter: Path) -> None:
    config = starter / "domain.yaml"
    config.write_text(config.read_text(encoding="utf-8") + f"\nextra: {DEEP}\n", encoding="utf-8")
    done = check(starter)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nested deeper than" in done.stdout and "RecursionError" not in done.stdout + done.stderr


def test_deep_yaml_in_a_skill_is_a_config_error_naming_the_file(starter: Path) -> None:
    (starter / "skills" / "deep.yaml").write_text(f"id: deep\nsteps: {DEEP}\n", encoding="utf-8")
    done = check(starter)
    assert done.returncode == 2 and "deep.yaml" in done.stdout and "nested deeper than" in done.stdout


def test_domain_yaml_that_is_a_device_link_is_refused(starter: Path) -> None:
    config = starter / "domain.yaml"
    config.unlink()
    config.symlink_to("/dev/zero")
    done = check(starter)
    assert done.returncode == 2 and "not a regular file" in done.stdout + done.stderr


def test_loading_the_domain_directly_skips_the_fifo_too(starter: Path) -> None:
    os.mkfifo(starter / "knowledge" / "checkout" / "pipe.md")
    code = ("import sys; from evigate.domain import load_domain_dir; "
            "[row] = [r for r in load_domain_dir(sys.argv[1]).check_sources() if r.kind == 'knowledge']; "
            "print(row.reachable, row.detail)")
    done = subprocess.run([sys.executable, "-c", code, str(starter)], capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("True ") and "pipe.md" in done.stdout, done.stderr[-500:]
