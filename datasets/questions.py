"""The demo world's question bank: operator questions with their incident, phrasing family and split.

The format is documented in ``datasets/README.md`` ("The question bank"). Pure pydantic + YAML, no DSPy: the
benchmark and the metrics (evigate.optimize.question_metrics) read it without loading any model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evigate.datasets.fixtures import Split
from evigate.errors import DatasetError

QUESTION_BANK = Path(__file__).parent / "data" / "question_bank.yaml"
Locale = Literal["zh", "en"]


class Family(BaseModel):
    """A phrasing family: questions phrased alike (its split is theirs: a family never crosses splits)."""

    model_config = ConfigDict(extra="forbid")
    split: Split
    about: str = Field(min_length=1)


class Question(BaseModel):
    """One question: ``incident`` is a ``world_incidents`` id, or None when no incident of the world answers it."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    locale: Locale
    incident: str | None
    family: str = Field(min_length=1)
    split: Split


class QuestionBank(BaseModel):
    """Every family and question of one bank file, checked for consistency."""

    model_config = ConfigDict(extra="forbid")
    families: dict[str, Family]
    questions: list[Question] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> QuestionBank:
        duplicates = [qid for qid, n in Counter(q.id for q in self.questions).items() if n > 1]
        if duplicates:
            raise ValueError(f"duplicate question ids: {duplicates}")
        for question in self.questions:
            family = self.families.get(question.family)
            if family is None:
                raise ValueError(f"{question.id}: unknown family {question.family!r}")
            if family.split != question.split:
                raise ValueError(f"{question.id}: split {question.split!r} differs from its family's "
                                 f"({question.family}: {family.split!r}); a family never crosses splits")
        return self


def read_question_bank(path: str | Path = QUESTION_BANK) -> QuestionBank:
    """The bank in ``path``; DatasetError naming the file for unreadable YAML or an invalid bank."""
    file = Path(path)
    try:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DatasetError(f"{file}: cannot read the question bank: {exc}") from exc
    try:
        return QuestionBank.model_validate(raw)
    except ValidationError as exc:
        raise DatasetError(f"{file}: invalid question bank: {exc}") from exc


def load_questions(
    split: Split | None = None, locale: Locale | None = None, path: str | Path = QUESTION_BANK,
    incidents: Iterable[str | None] | None = None,
) -> list[Question]:
    """Questions of the bank, optionally of one split, one locale and some incidents (None = no incident), in file
    order. Incident ids are checked against the demo world (an unknown id is a DatasetError)."""
    from evigate.demo.catalog import INCIDENTS

    bank = read_question_bank(path)
    known = {incident.incident_id for incident in INCIDENTS}
    unknown = sorted({q.incident for q in bank.questions if q.incident is not None and q.incident not in known})
    if unknown:
        raise DatasetError(f"{path}: questions name incidents the demo world does not have: {unknown}")
    wanted = set(incidents) if incidents is not None else None
    return [q for q in bank.questions
            if (split is None or q.split == split) and (locale is None or q.locale == locale)
            and (wanted is None or q.incident in wanted)]
