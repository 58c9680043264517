"""`evigate schema Domain` describes what domain.yaml may hold: the starter and the docs' example validate."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from evigate.domain import Domain

ROOT = Path(__file__).resolve().parents[2]


def docs_example() -> dict:
    text = (ROOT / "docs" / "domains.md").read_text(encoding="utf-8")
    block = text.split("### A complete domain.yaml", 1)[1]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", block, re.S).group(1))


def test_the_starter_and_the_docs_example_fit_the_schema(starter: Path) -> None:
    schema = Domain.model_json_schema()
    for document in (yaml.safe_load((starter / "domain.yaml").read_text(encoding="utf-8")), docs_example()):
        jsonschema.validate(document, schema)


def test_the_docs_example_is_a_valid_domain() -> None:
    domain = Domain.model_validate({**docs_example(), "knowledge": []})
    assert {tool.name for tool in domain.tools} == {"search_logs", "lookup_knowledge", "checkout_latency",
                                                    "order_status"}
    assert {source.kind for source in domain.sources.values()} == {"logfiles", "knowledge", "prometheus", "sql"}


def test_the_schema_rejects_an_unknown_source_kind() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "x", "sources": {"s": {"kind": "splunk", "url": "http://x"}}},
                            Domain.model_json_schema())
