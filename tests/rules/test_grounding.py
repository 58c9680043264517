"""Sentence splitting and code labels of evigate.verify, from YAML cases (zh, en, mixed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evigate import verify
from evigate.rules.grounding import bind, make_passages, split_sentences

CASES = Path(__file__).parent / "cases"


def _cases(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((CASES / name).read_text("utf-8"))["cases"]


def _label_cases() -> list[dict[str, Any]]:
    """grounding_labels.yaml, then one file per class under grounding/."""
    classes = sorted((CASES / "grounding").glob("*.yaml"))
    files = ["grounding_labels.yaml", *(f"grounding/{path.name}" for path in classes)]
    return [case for name in files for case in _cases(name)]


@pytest.mark.parametrize("case", _cases("grounding_sentences.yaml"), ids=lambda case: case["name"])
def test_sentence_splitting(case: dict[str, Any]) -> None:
    sentences = split_sentences(case["text"])
    assert [sentence.text for sentence in sentences] == case["sentences"]
    for sentence in sentences:
        assert case["text"][sentence.start:sentence.end] == sentence.text


@pytest.mark.parametrize("case", _label_cases(), ids=lambda case: case["name"])
def test_code_labels(case: dict[str, Any]) -> None:
    result = verify(case["answer"], case["context"])
    assert [sentence.label for sentence in result.sentences] == case["labels"], [
        (s.text, s.label, s.reason) for s in result.sentences
    ]
    if "supported" in case:
        assert result.supported is case["supported"]
    if "verdict" in case:
        assert result.verdict == case["verdict"]


def test_binding_points_at_the_supporting_passage_and_span() -> None:
    passages = make_passages({"logs": "GC pause 1200ms. Heap at 91%.", "order": "order 123 status=FAILED"})
    binding = bind("Heap usage was at 91%", passages)
    assert binding is not None and passages[binding.passage].name == "logs"
    assert "Heap at 91%" in binding.span_text(passages)


def test_sentences_carry_passage_and_span_into_the_result() -> None:
    context = {"runbook": "Restarting pay-gateway clears the stuck pool.", "logs": "pool exhausted at 10:05"}
    result = verify("The pool was exhausted at 10:05.", context)
    sentence = result.sentences[0]
    assert sentence.passage == "logs" and sentence.span is not None
    assert context["logs"][sentence.span[0]:sentence.span[1]] == sentence.span_text
