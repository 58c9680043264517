"""docs/spec-map.md explains every "§n" the code cites, so a reader without the design documents can follow."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_FOLDERS = ("evigate", "llm", "modules", "rules", "store", "signatures", "tools", "domain", "demo", "optimize",
                "datasets", "bench", "scripts")


def test_every_cited_section_has_a_line() -> None:
    cited: set[str] = set()
    for folder in CODE_FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".yaml", ".md") and path.is_file():
                cited.update(re.findall(r"§\d+(?:\.\d+)*", path.read_text(encoding="utf-8")))
    explained = set(re.findall(r"^- \*\*(§\d+(?:\.\d+)*)\*\*", (ROOT / "docs" / "spec-map.md").read_text("utf-8"),
                               re.M))
    assert cited, "no citations found: the scan is broken"
    assert sorted(cited - explained) == []
