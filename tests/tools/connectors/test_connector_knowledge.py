"""Knowledge connector: the domain's Markdown folder through the retrieval layers, reindexed on change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evigate.errors import ConfigError
from evigate.tools.connectors import CONNECTORS, parse_sources, parse_tools
from evigate.tools.connectors.knowledge import LiveKnowledgeBase

SOURCES = {"runbooks": {"kind": "knowledge", "path": "kb"}}
TOOLS = [{"name": "search_runbooks", "description": "Search the runbooks.", "source": "runbooks"}]


@pytest.fixture()
def domain(tmp_path: Path) -> Path:
    (tmp_path / "kb" / "billing").mkdir(parents=True)
    (tmp_path / "kb" / "billing" / "errors.md").write_text(
        "# Billing errors\n\n## LEDGER_LOCK_TIMEOUT\nThe ledger row lock was held past 5 s; check long "
        "reconciliation jobs.\n\n## CARD_DECLINED\nThe issuer declined the card. Not an incident.\n",
        encoding="utf-8")
    return tmp_path


def test_lookup_finds_error_code_section_and_records_invocation(domain: Path, make_toolbox) -> None:
    toolbox = make_toolbox(SOURCES, TOOLS, domain)
    result = toolbox.call("search_runbooks", query="what does LEDGER_LOCK_TIMEOUT mean")
    assert result.success, result.error
    assert result.output.startswith('search_runbooks "what does LEDGER_LOCK_TIMEOUT mean": ')
    assert "billing/errors.md § LEDGER_LOCK_TIMEOUT (layer=exact_error_code, relevance=high)" in result.output
    [row] = toolbox.invocations()
    assert row.tool_name == "search_runbooks" and row.success and row.is_evidence


def test_index_is_rebuilt_when_a_document_changes(domain: Path) -> None:
    live = LiveKnowledgeBase(domain / "kb")
    assert not live.current().search("QUEUE_BACKLOG")
    assert live.current() is live.current() and live.builds == 1
    new = domain / "kb" / "queues.md"
    new.write_text("# Queues\n\n## QUEUE_BACKLOG\nConsumers fell behind.\n", encoding="utf-8")
    assert live.current().search("QUEUE_BACKLOG")[0].section.document == "queues.md"
    stamp = new.stat().st_mtime_ns + 5_000_000_000
    new.write_text("# Queues\n\n## QUEUE_STALLED\nNo consumer at all.\n", encoding="utf-8")
    os.utime(new, ns=(stamp, stamp))
    assert not live.current().search("QUEUE_BACKLOG") and live.builds == 3


def test_check_counts_documents_and_reports_a_missing_folder(domain: Path) -> None:
    [source] = parse_sources(SOURCES).values()
    check = CONNECTORS["knowledge"].check("runbooks", source, base_dir=domain)
    assert check.reachable and check.seen == 1 and check.kind == "knowledge"
    missing = CONNECTORS["knowledge"].check("runbooks", source, base_dir=domain / "nowhere")
    assert not missing.reachable and "does not exist" in missing.detail


def test_declared_params_are_refused(domain: Path) -> None:
    sources = parse_sources(SOURCES)
    tools = parse_tools([{**TOOLS[0], "params": {"q": {"type": "string"}}}], sources)
    with pytest.raises(ConfigError, match=r"tools\.search_runbooks\.params"):
        CONNECTORS["knowledge"].build_tools("runbooks", sources["runbooks"], tools, base_dir=domain)


def test_unknown_kind_and_unknown_source_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"sources\.x\.kind: unknown source kind 'loki'"):
        parse_sources({"x": {"kind": "loki"}})
    with pytest.raises(ConfigError, match=r"sources\.runbooks\.colour"):
        parse_sources({"runbooks": {"kind": "knowledge", "colour": "red"}})
    with pytest.raises(ConfigError, match=r"tools\.t\.source: unknown source 'nope'"):
        parse_tools([{"name": "t", "description": "d", "source": "nope"}], parse_sources(SOURCES))
