"""Grounding of free text: split an answer into claims, bind each to context passages, label what code can decide.

Pure and deterministic (no I/O, no DSPy): ``evigate.verify`` is the facade that adds the optional Verifier model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from evigate.rules.engine.gatekeeper import Gatekeeper, GateOutcome
from evigate.rules.grounding.binding import Binding, Passage, bind, content_tokens, make_passages
from evigate.rules.grounding.case import SESSION_ID, TOOL_NAME, GroundingCase, SentenceCase, build_case, is_claim
from evigate.rules.grounding.judge import (
    CodeLabel,
    GroundingParams,
    code_labels,
    decide,
    merge_model_checks,
    to_checks,
)
from evigate.rules.grounding.sentences import Sentence, split_sentences


@dataclass(frozen=True)
class Grounding:
    """An answer laid out as a session, what the Gatekeeper found, and code's label of every claim."""

    case: GroundingCase
    gate: GateOutcome
    labels: list[CodeLabel]

    @property
    def undecided(self) -> list[CodeLabel]:
        """The claims code handed on to a Verifier model."""
        return [label for label in self.labels if not label.decided]


@lru_cache(maxsize=1)
def verify_gatekeeper() -> Gatekeeper:
    """The shipped rules, with the context passages the caller gave as the authority: an answer may relay a step a
    passage gives ("run the migration first"), never text that addresses the model nor code fetched from a URL and
    run (``curl … | sh``, from any passage); and it may keep a passage's own hedge ("is usually found in …"),
    which restates the passage rather than guessing."""
    tools = ["lookup_knowledge", TOOL_NAME]
    return Gatekeeper.with_overrides({
        "action.planted_instruction": {"params": {"knowledgeTools": tools, "instructingClaims": False}},
        "claim.hallucination_phrases": {"params": {"allowQuoted": True}},
    })


def ground(
    answer: str,
    context: Sequence[str] | Mapping[str, str] | str,
    gatekeeper: Gatekeeper | None = None,
    params: GroundingParams | None = None,
) -> Grounding:
    """Split, bind, gate and label. Never raises on any text."""
    gatekeeper = gatekeeper or verify_gatekeeper()
    case = build_case(answer if isinstance(answer, str) else "", context)
    gate = gatekeeper.validate(case.output, case.invocations, SESSION_ID)
    return Grounding(case, gate, code_labels(case, gate, params))


__all__ = [
    "Binding", "CodeLabel", "Grounding", "GroundingCase", "GroundingParams", "Passage", "Sentence", "SentenceCase",
    "bind", "build_case", "code_labels", "content_tokens", "decide", "ground", "is_claim", "make_passages",
    "merge_model_checks",
    "split_sentences", "to_checks",
]
