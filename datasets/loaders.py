"""Fixture cases as ``dspy.Example`` objects, by set and by fixed split.

Verifier examples take ``verifier_input`` as their only input (the Verifier's call contract) and carry
``judgement`` — the gold ``VerifierJudgement`` — so labelled demos have the Verifier predictor's output field.
Composer examples take ``composer_input``. Examples carry only their ``case_id``; the metrics find the full case
(invocations, gold labels) with :func:`case_of`. Keeping the tool outputs out of the examples keeps what DSPy
copies into demos and what MLflow autologging writes as tables small.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evigate.datasets.fixtures import ComposerCase, Split, VerifierCase, read_cases
from evigate.errors import DatasetError
from evigate.signatures import ComposerInput, VerifierInput

if TYPE_CHECKING:
    import dspy

VerifierSet = Literal["demo_world", "holmesgpt"]
VERIFIER_SETS: tuple[VerifierSet, ...] = ("demo_world", "holmesgpt")
DATA_DIR = Path(__file__).parent / "data"
DEMO_WORLD_FIXTURES = DATA_DIR / "verifier_demo_world.jsonl"
COMPOSER_FIXTURES = DATA_DIR / "composer"


def load_verifier_cases(sets: Iterable[str] = VERIFIER_SETS, split: Split | None = None) -> list[VerifierCase]:
    """Verifier cases of the named sets (``demo_world``, ``holmesgpt``), optionally of one split."""
    cases: list[VerifierCase] = []
    for name in sets:
        if name == "demo_world":
            cases.extend(read_cases(DEMO_WORLD_FIXTURES, VerifierCase))
        elif name == "holmesgpt":
            from evigate.datasets.holmesgpt import load_holmesgpt_cases

            cases.extend(load_holmesgpt_cases())
        else:
            raise DatasetError(f"unknown Verifier set {name!r}; known: {', '.join(VERIFIER_SETS)}")
    return [case for case in cases if split is None or case.split == split]


def load_composer_cases(split: Split | None = None, path: str | Path = COMPOSER_FIXTURES) -> list[ComposerCase]:
    """Composer cases (one YAML file each under ``data/composer``), optionally of one split."""
    return [case for case in read_cases(path, ComposerCase) if split is None or case.split == split]


def load_own_cases(path: str | Path, kind: Literal["verifier", "composer"],
                   split: Split | None = None) -> list[VerifierCase] | list[ComposerCase]:
    """A team's own fixtures under ``path`` (``--data``): Verifier or Composer cases, plain or from labelled
    sessions, optionally of one split. A path holding no case of that kind at all is an error, not an empty set."""
    model: type[VerifierCase] | type[ComposerCase] = VerifierCase if kind == "verifier" else ComposerCase
    cases = read_cases(path, model, mixed=True)
    if not cases:
        raise DatasetError(f"{path}: no {kind} cases (see datasets/README.md for the formats, or `evigate label`)")
    return [case for case in cases if split is None or case.split == split]  # type: ignore[return-value]


_CASES: dict[str, VerifierCase | ComposerCase] = {}


class TableFriendlyVerifierInput(VerifierInput):
    """A ``VerifierInput`` that MLflow tables store as its JSON form.

    MLflow autologging logs evaluated examples as tables through pandas, whose JSON writer calls ``toDict()`` when
    an object has one, and otherwise walks every attribute of a pydantic model (including its class metadata),
    which makes each row ~10x larger and unreadable.
    """

    def toDict(self) -> dict[str, Any]:  # the name pandas looks for
        return self.model_dump(mode="json")


class TableFriendlyComposerInput(ComposerInput):
    """A ``ComposerInput`` that MLflow tables store as its JSON form (see :class:`TableFriendlyVerifierInput`)."""

    def toDict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def register_cases(cases: Iterable[VerifierCase | ComposerCase]) -> None:
    """Make cases findable by :func:`case_of` (examples built here register themselves)."""
    for case in cases:
        _CASES[case.case_id] = case


def case_of(example: Any) -> Any:
    """The fixture case behind an example: its ``case`` attribute if set, else the registered case of its id."""
    case = example.get("case") if hasattr(example, "get") else getattr(example, "case", None)
    if case is not None:
        return case
    case_id = example.get("case_id") if hasattr(example, "get") else getattr(example, "case_id", None)
    if case_id not in _CASES:
        raise DatasetError(f"no fixture case registered for example {case_id!r}; build it with verifier_example()")
    return _CASES[case_id]


@cache
def _judgement_class() -> type:
    """``VerifierJudgement`` made table-friendly; built on first use because its module imports DSPy."""
    from evigate.signatures.agents import VerifierJudgement

    class TableFriendlyJudgement(VerifierJudgement):
        def toDict(self) -> dict[str, Any]:
            return self.model_dump(mode="json")

    return TableFriendlyJudgement


def verifier_example(case: VerifierCase) -> dspy.Example:
    """One Verifier case as an example whose input is ``verifier_input``."""
    import dspy

    from evigate.signatures import ClaimCheck

    judgement = _judgement_class()(
        verdict=case.gold_verdict,
        claim_checks=[
            ClaimCheck(claim_id=claim_id, verification=label, detail=case.notes.get(claim_id, ""))
            for claim_id, label in case.gold_labels.items()
        ],
        rationale=case.notes.get("verdict", ""),
    )
    register_cases([case])
    return dspy.Example(
        verifier_input=TableFriendlyVerifierInput.model_validate(case.verifier_input.model_dump()),
        judgement=judgement,
        case_id=case.case_id,
        gold_verdict=case.gold_verdict,
    ).with_inputs("verifier_input")


def composer_example(case: ComposerCase) -> dspy.Example:
    """One Composer case as an example whose input is ``composer_input``."""
    import dspy

    register_cases([case])
    composer_input = TableFriendlyComposerInput.model_validate(case.composer_input.model_dump())
    return dspy.Example(composer_input=composer_input, case_id=case.case_id).with_inputs("composer_input")


def verifier_examples(split: Split | None = None, sets: Iterable[str] = VERIFIER_SETS) -> list[dspy.Example]:
    """Verifier examples of the named sets and split, in fixture order."""
    return [verifier_example(case) for case in load_verifier_cases(sets, split)]


def composer_examples(split: Split | None = None) -> list[dspy.Example]:
    """Composer examples of a split, in fixture order."""
    return [composer_example(case) for case in load_composer_cases(split)]


def dataset_digest(cases: Sequence[VerifierCase | ComposerCase]) -> str:
    """SHA-256 (first 16 hex digits) of the cases' canonical JSON, order-independent: changes whenever a label does."""
    digest = hashlib.sha256()
    for text in sorted(json.dumps(case.model_dump(mode="json"), sort_keys=True, ensure_ascii=False) for case in cases):
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()[:16]
