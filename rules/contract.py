"""The Executor V2 output as the deterministic core reads it: field names and tolerant views, in one place.

The typed contract is :mod:`evigate.signatures.executor` (``ExecutorOutputV2``). The Gatekeeper, though, judges the
parsed JSON as the model wrote it — a claim may be a string, a ``claim_text`` a list — and must fail closed rather
than raise, so the core reads plain mappings through these helpers: anything of the wrong type reads as absent
("" for a text, None for a label, nothing for a list). Every field name below is checked against the pydantic models
by ``tests/rules/test_contract.py``: renaming a field of the contract breaks that test, not a rule in production.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from pydantic import BaseModel

from evigate.signatures.executor import Claim, EvidenceBinding, ExecutorOutputV2, Hypothesis, RecommendedAction

# -- field names ----------------------------------------------------------------------------------------------------

ANSWER_VERSION_KEY: Final = "answer_version"
CLAIMS: Final = "claims"
HYPOTHESES: Final = "hypotheses"
ACTIONS: Final = "recommended_actions"
MISSING_INFO: Final = "missing_info"

CLAIM_ID: Final = "claim_id"
CLAIM_TYPE: Final = "claim_type"
CLAIM_TEXT: Final = "claim_text"
SUPPORT_LEVEL: Final = "support_level"
BINDINGS: Final = "evidence_bindings"

SOURCE_TYPE: Final = "source_type"
SOURCE_ID: Final = "source_id"
TOOL_NAME: Final = "tool_name"
INVOCATION_IDS: Final = "source_invocation_ids"
EXCERPT: Final = "evidence_excerpt"

HYPOTHESIS_TEXT: Final = "hypothesis_text"
BASIS: Final = "basis"
NEEDED_EVIDENCE: Final = "needed_evidence"
ACTION_TEXT: Final = "action_text"
REASON: Final = "reason"

OWNER: Final[dict[str, type[BaseModel]]] = {
    ANSWER_VERSION_KEY: ExecutorOutputV2, CLAIMS: ExecutorOutputV2, HYPOTHESES: ExecutorOutputV2,
    ACTIONS: ExecutorOutputV2, MISSING_INFO: ExecutorOutputV2,
    CLAIM_ID: Claim, CLAIM_TYPE: Claim, CLAIM_TEXT: Claim, SUPPORT_LEVEL: Claim, BINDINGS: Claim,
    SOURCE_TYPE: EvidenceBinding, SOURCE_ID: EvidenceBinding, TOOL_NAME: EvidenceBinding,
    INVOCATION_IDS: EvidenceBinding, EXCERPT: EvidenceBinding,
    HYPOTHESIS_TEXT: Hypothesis, BASIS: Hypothesis, NEEDED_EVIDENCE: Hypothesis,
    ACTION_TEXT: RecommendedAction, REASON: RecommendedAction,
}
"""The model each field name above belongs to (the test's source of truth)."""

ITEM_TEXTS: Final = (CLAIM_TEXT, HYPOTHESIS_TEXT, BASIS, ACTION_TEXT, REASON)
"""The free-text fields of claims, hypotheses and actions: what a model wrote in its own words."""


# -- tolerant views of executor output that may violate the schema --------------------------------------------------


def iter_claims(data: Mapping[str, Any] | None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, claim) for every claim that is an object; anything else is the schema rule's business."""
    yield from iter_objects(data, CLAIMS)


def iter_objects(data: Mapping[str, Any] | None, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, item) for every item of the top-level list ``name`` that is an object."""
    items = data.get(name) if isinstance(data, Mapping) else None
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield index, item


def iter_bindings(claim: Mapping[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, binding) for every evidence binding of a claim (or an action) that is an object."""
    yield from iter_objects(claim, BINDINGS)


def as_invocation_id(value: Any) -> int | None:
    """An invocation id given as an int, an integral float or a digit string; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 18:
        return int(value.strip())
    return None


def raw_invocation_ids(binding: Mapping[str, Any]) -> list[Any]:
    """A binding's ``source_invocation_ids`` as written, when it is a list; [] otherwise."""
    ids = binding.get(INVOCATION_IDS)
    return ids if isinstance(ids, list) else []


def binding_ids(binding: Mapping[str, Any]) -> list[int]:
    """The usable invocation ids of a binding (a lone id not in a list counts too)."""
    ids = binding.get(INVOCATION_IDS)
    if not isinstance(ids, list):
        ids = [ids] if ids is not None else []
    return [value for value in (as_invocation_id(item) for item in ids) if value is not None]


def text_of(obj: Mapping[str, Any], key: str) -> str:
    """A string field, or "" when missing or not a string."""
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def strings_of(obj: Mapping[str, Any], key: str) -> list[str]:
    """The strings of a list field ([] when missing or not a list; items that are no string are skipped)."""
    value = obj.get(key)
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def label_of(obj: Mapping[str, Any], key: str) -> str | None:
    """A string field used as a label (claim_type, support_level), or None when missing or not a string."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def claim_key(claim: Mapping[str, Any], index: int) -> str:
    """The id decisions use for a claim: its claim_id, or its path when it has none."""
    claim_id = claim.get(CLAIM_ID)
    return claim_id if isinstance(claim_id, str) and claim_id.strip() else f"{CLAIMS}[{index}]"


def claim_text(claim: Mapping[str, Any]) -> str:
    """The claim's text ("" when missing or not a string)."""
    return text_of(claim, CLAIM_TEXT)


def claim_type(claim: Mapping[str, Any]) -> str | None:
    """The claim's type (None when missing or not a string)."""
    return label_of(claim, CLAIM_TYPE)


def support_level(claim: Mapping[str, Any]) -> str | None:
    """The claim's support level (None when missing or not a string)."""
    return label_of(claim, SUPPORT_LEVEL)


def excerpt_of(binding: Mapping[str, Any]) -> str:
    """A binding's evidence excerpt ("" when missing or not a string)."""
    return text_of(binding, EXCERPT)


def tool_of(binding: Mapping[str, Any]) -> str:
    """A binding's tool name ("" when missing or not a string)."""
    return text_of(binding, TOOL_NAME)


def observation_claim(claim_id: str, kind: str, text: str, binding: Mapping[str, Any]) -> dict[str, Any]:
    """A claim code adds: a direct observation of ``text`` with the one evidence binding ``binding``."""
    return {CLAIM_ID: claim_id, CLAIM_TYPE: kind, CLAIM_TEXT: text, SUPPORT_LEVEL: "direct",
            BINDINGS: [dict(binding)]}


def with_claims(data: Mapping[str, Any], claims: list[Any]) -> dict[str, Any]:
    """A shallow copy of ``data`` whose claims list is ``claims``."""
    return {**data, CLAIMS: claims}
