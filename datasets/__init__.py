"""Labelled fixtures for evaluating and optimizing the Verifier and the Composer, and their loaders.

The fixture format is documented in ``datasets/README.md``. Two Verifier sets (``demo_world``: our demo world's
real tool outputs; ``holmesgpt``: our labels on HolmesGPT's recorded Kubernetes tool outputs) and one Composer set,
each with fixed train/dev/test splits. The demo world itself lives in :mod:`evigate.demo`.
"""

from __future__ import annotations

from evigate.datasets.fixtures import SPLITS, ComposerCase, Split, VerifierCase, read_cases, write_jsonl
from evigate.datasets.loaders import (
    VERIFIER_SETS,
    case_of,
    composer_example,
    composer_examples,
    dataset_digest,
    load_composer_cases,
    load_own_cases,
    load_verifier_cases,
    register_cases,
    verifier_example,
    verifier_examples,
)
from evigate.datasets.questions import Question, load_questions, read_question_bank

__all__ = [
    "SPLITS",
    "VERIFIER_SETS",
    "ComposerCase",
    "Question",
    "Split",
    "VerifierCase",
    "case_of",
    "composer_example",
    "composer_examples",
    "dataset_digest",
    "load_composer_cases",
    "load_own_cases",
    "load_questions",
    "load_verifier_cases",
    "read_cases",
    "read_question_bank",
    "register_cases",
    "verifier_example",
    "verifier_examples",
    "write_jsonl",
]
