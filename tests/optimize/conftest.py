"""Scripted-LM helpers: a DummyLM that answers each fixture case, keyed by text only that case's prompt holds."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils import DummyLM

from evigate.datasets import (
    ComposerCase,
    VerifierCase,
    composer_example,
    dataset_digest,
    load_composer_cases,
    load_verifier_cases,
    verifier_example,
)
from evigate.optimize.data import AgentData

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _keys(case: VerifierCase | ComposerCase) -> list[str]:
    if isinstance(case, VerifierCase):
        claims = case.verifier_input.executor_structured_output["claims"]
        return [claim["claim_text"] for claim in claims]
    return [text for text in _strings(case.composer_input.model_dump()) if len(text) > 12]


def keyed_cases(cases: list[Any]) -> list[tuple[Any, str]]:
    """(case, key) for every case with a string no other case has (quotes and newlines excluded: JSON escapes them)."""
    counts = Counter(key for case in cases for key in set(_keys(case)))
    chosen = []
    for case in cases:
        unique = [key for key in _keys(case) if counts[key] == 1 and '"' not in key and "\n" not in key]
        if unique:
            chosen.append((case, unique[0]))
    return chosen


def verifier_answer(case: VerifierCase, wrong: bool = False) -> dict[str, Any]:
    """The gold judgement, or (``wrong``) a gullible one that calls everything directly observed and PASS."""
    labels = {claim_id: "direct_observation" for claim_id in case.gold_labels} if wrong else case.gold_labels
    checks = [{"claim_id": claim_id, "verification": label, "detail": "", "evidence_refs": []}
              for claim_id, label in labels.items()]
    verdict = "PASS" if wrong else case.gold_verdict
    return {"judgement": {"verdict": verdict, "claim_checks": checks, "hypothesis_checks": [], "rationale": "r"}}


def composer_answer(case: ComposerCase) -> dict[str, Any]:
    """An answer made of the input's allowed claims plus the verdict's required wording (no gap quoted verbatim)."""
    ci = case.composer_input
    facts = "\n".join(claim.claim_text for claim in ci.allowed_claims)
    lead = {"PASS": "", "LOW_CONFID": "当前证据仍有缺口，部分结论尚未确认。",
            "REJECT": "当前无法基于已获取证据生成可靠结论。"}[ci.verdict]
    directions = "另有可能方向尚待验证。" if ci.allowed_hypotheses else ""
    text = f"{lead}{facts}{directions}"
    return {"composer_output": {"answer_summary": lead or facts[:60], "recommended_actions": [],
                                "user_facing_answer": text}}


def scripted_data(agent: str, per_split: int = 4, wrong: Iterable[str] = ()) -> tuple[AgentData, DummyLM]:
    """Small splits whose every example the returned DummyLM can answer."""
    wrong = set(wrong)
    if agent == "verifier":
        pool: list[Any] = load_verifier_cases(["demo_world"])
    else:
        pool = load_composer_cases()
    data, answers = AgentData(), {}
    keyed = keyed_cases(pool)
    for split in ("train", "dev", "test"):
        picked = [(case, key) for case, key in keyed if case.split == split][:per_split]
        cases = [case for case, _ in picked]
        for case, key in picked:
            answers[key] = (verifier_answer(case, case.case_id in wrong) if agent == "verifier"
                            else composer_answer(case))
        data.splits[split] = [verifier_example(c) if agent == "verifier" else composer_example(c) for c in cases]
        data.cases.update({case.case_id: case for case in cases})
        data.rows[split] = [{"case_id": case.case_id} for case in cases]
        data.digests[split] = dataset_digest(cases)
    return data, DummyLM(answers, adapter=dspy.JSONAdapter())


@pytest.fixture
def tracking_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    return uri
