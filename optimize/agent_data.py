"""What a job's examples are held in (``AgentData``) and how a dev or test split is cut down (``balanced_head``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy


@dataclass
class AgentData:
    """Examples per split, the cases behind them by id, dataset rows for MLflow and a digest per split."""

    splits: dict[str, list[dspy.Example]] = field(default_factory=dict)
    cases: dict[str, Any] = field(default_factory=dict)
    """Case by id: a VerifierCase, a ComposerCase, a bank ``Question`` (planner) or an ``ExecutorCase``."""
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)


def balanced_head(cases: Sequence[Any], key: Callable[[Any], str], limit: int | None) -> list[Any]:
    """The first ``limit`` cases taken round-robin across ``key`` groups, so a cut-down split keeps every verdict."""
    if limit is None or limit >= len(cases):
        return list(cases)
    groups: dict[str, list[Any]] = {}
    for case in cases:
        groups.setdefault(key(case), []).append(case)
    picked: list[Any] = []
    queues = [list(group) for _, group in sorted(groups.items())]
    while len(picked) < limit and any(queues):
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    return picked
