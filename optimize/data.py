"""What an optimization or evaluation job runs on: split examples, the agent module, the LM, the program dir."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dspy

from evigate.datasets import (
    SPLITS,
    ComposerCase,
    VerifierCase,
    composer_example,
    dataset_digest,
    load_composer_cases,
    load_own_cases,
    load_verifier_cases,
    verifier_example,
)
from evigate.errors import DatasetError
from evigate.llm.models import is_local_model
from evigate.optimize.agent_data import AgentData, balanced_head

STAGE_AGENTS: tuple[str, ...] = ("planner", "executor")
"""Agents scored on the question bank with their stage's inputs cached (``optimize/stage_data.py``)."""
KNOWN_AGENTS: tuple[str, ...] = ("verifier", "composer", *STAGE_AGENTS)


def load_agent_data(agent: str, sets: Sequence[str] = ("demo_world", "holmesgpt"),
                    eval_limit: int | None = None, splits: Sequence[str] = SPLITS,
                    data_path: str | Path | None = None) -> AgentData:
    """Load an agent's fixtures; ``eval_limit`` caps the dev and test splits (never train). ``data_path`` reads a
    team's own fixtures instead of the shipped sets (``--data``)."""
    if agent in STAGE_AGENTS:
        if data_path is not None:
            raise DatasetError(f"--data is not supported for the {agent}: its examples are the question bank's "
                               "(datasets/data/question_bank.yaml) scored against the demo world's truth")
        from evigate.optimize.stage_data import load_stage_data

        return load_stage_data(agent, eval_limit, splits)
    data = AgentData()
    own: list[Any] | None = None
    if data_path is not None:
        if agent not in ("verifier", "composer"):
            raise ValueError(f"unknown agent {agent!r}; known: {', '.join(KNOWN_AGENTS)}")
        own = load_own_cases(data_path, "verifier" if agent == "verifier" else "composer")
    for split in splits:
        if agent == "verifier":
            cases: list[Any] = load_verifier_cases(sets, split) if own is None else [
                case for case in own if case.split == split]
            if split != "train":
                cases = balanced_head(cases, lambda c: c.gold_verdict, eval_limit)
            data.splits[split] = [verifier_example(case) for case in cases]
            data.rows[split] = [_verifier_row(case) for case in cases]
        elif agent == "composer":
            cases = load_composer_cases(split) if own is None else [case for case in own if case.split == split]
            if split != "train":
                cases = balanced_head(cases, lambda c: c.composer_input.verdict, eval_limit)
            data.splits[split] = [composer_example(case) for case in cases]
            data.rows[split] = [_composer_row(case) for case in cases]
        else:
            raise ValueError(f"unknown agent {agent!r}; known: {', '.join(KNOWN_AGENTS)}")
        if own is not None and not cases:
            raise DatasetError(f"{data_path}: no {agent} cases with split {split!r} (a job needs train, dev and test; "
                               "eval needs the split it scores)")
        data.cases.update({case.case_id: case for case in cases})
        data.digests[split] = dataset_digest(cases)
    return data


def _verifier_row(case: VerifierCase) -> dict[str, Any]:
    return {
        "case_id": case.case_id, "source": case.source, "split": case.split, "tags": ",".join(case.tags),
        "query": case.verifier_input.original_query, "gold_verdict": case.gold_verdict,
        "gold_labels": json.dumps(case.gold_labels, ensure_ascii=False), "claims": str(len(case.gold_labels)),
        "gatekeeper_status": case.verifier_input.gatekeeper_result.status,
    }


def _composer_row(case: ComposerCase) -> dict[str, Any]:
    return {
        "case_id": case.case_id, "split": case.split, "tags": ",".join(case.tags),
        "verdict": case.composer_input.verdict, "allowed_claims": str(len(case.composer_input.allowed_claims)),
        "must_contain": json.dumps(case.must_contain, ensure_ascii=False),
        "must_not_contain": json.dumps(case.must_not_contain, ensure_ascii=False),
    }


def new_module(agent: str) -> dspy.Module:
    """A fresh built-in agent module (the baseline)."""
    if agent == "verifier":
        from evigate.modules.verifier import Verifier

        return Verifier()
    if agent == "composer":
        from evigate.modules.composer import Composer

        return Composer()
    if agent in STAGE_AGENTS:
        from evigate.optimize.stage_data import new_stage_module

        return new_stage_module(agent)
    raise ValueError(f"unknown agent {agent!r}; known: {', '.join(KNOWN_AGENTS)}")


def load_saved_module(agent: str, program_dir: str | Path | None = None) -> tuple[dspy.Module, Path | None]:
    """The agent module with its saved state from ``<program_dir>/<agent>.json`` if present (else built-in)."""
    module = new_module(agent)
    state = resolve_program_dir(program_dir) / f"{agent}.json"
    if state.is_file():
        from evigate.modules.saved_state import load_agent_state

        load_agent_state(module, state, agent)
        return module, state
    return module, None


def resolve_program_dir(program_dir: str | Path | None) -> Path:
    """``program_dir`` or the settings' (``EVIGATE_PROGRAM_DIR``, default ``artifacts/program``)."""
    if program_dir is not None:
        return Path(program_dir)
    from evigate.settings import load_settings

    return Path(load_settings().program_dir)


LOCAL_EVAL_LIMIT = 6
"""Default dev/test cap for ``local/`` models: on 2 CPU cores one Verifier call takes minutes, so an unbounded
evaluation of ~60 examples per split would not finish in any useful time. ``--eval-limit`` overrides it."""
STAGE_LOCAL_EVAL_LIMITS: dict[str, int | None] = {"planner": None, "executor": 30}
"""The stage agents' caps for local models: the Planner's model decides only the questions code cannot (7 of dev's
41), so all of them; the Executor makes one model call per question, so 30 (the issue's floor for a paired
interval), incident-balanced."""


def default_eval_limit(eval_limit: int | None, model_name: str, agent: str | None = None) -> int | None:
    """``eval_limit`` if given (0 = everything), else for local models :data:`LOCAL_EVAL_LIMIT` (the stage agents':
    :data:`STAGE_LOCAL_EVAL_LIMITS`), else everything."""
    if eval_limit is not None:
        return eval_limit or None
    if not is_local_model(model_name):
        return None
    return STAGE_LOCAL_EVAL_LIMITS.get(agent or "", LOCAL_EVAL_LIMIT)


def resolve_lm(agent: str, model: str | None, lm: Any, llm_threads: int | None = None) -> tuple[Any, str]:
    """An injected LM as is, else ``make_lm(model or the agent's model in settings)``; returns (lm, its name).

    A local model gets the settings' per-call time limit (``timeouts.agent_seconds``), so one runaway generation
    cannot stall a job: the call fails, is scored as an empty prediction, and the job moves on. ``llm_threads``
    sets llama.cpp's thread count: on a machine whose cores are busy with other work, fewer threads than cores is
    much faster (measured here: 8.9 s with 1 thread vs 106 s with 2 for the same 58-token answer while another
    process held one of the two cores), because llama.cpp's threads spin-wait on each other.
    """
    if lm is not None:
        return lm, str(getattr(lm, "model", type(lm).__name__))
    from evigate.llm import lm_from_settings
    from evigate.settings import load_settings

    settings = load_settings()
    model = model or settings.models.for_agent(agent)  # type: ignore[arg-type]
    engine = {"n_threads": llm_threads} if llm_threads else {}
    return lm_from_settings(settings, agent, model=model, **engine), model  # type: ignore[arg-type]
