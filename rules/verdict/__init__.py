"""The verdict side: the §17 matrix and groundedness (``matrix``), the V1 rule score (``scoring``) and the round-2
retry context (``retry``)."""

from evigate.rules.verdict.matrix import VerdictDecision, decide_verdict

__all__ = ["VerdictDecision", "decide_verdict"]
