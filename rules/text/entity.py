"""The value an entity check works with: one entity found in a text, and the normalisation texts get first."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from evigate.rules.text.numbers import Dimension
from evigate.rules.text.patterns import EntityKind


@dataclass(frozen=True, slots=True)
class Entity:
    """One entity found in a text. Numbers carry their value in the dimension's base unit (seconds, %, bytes)."""

    kind: EntityKind
    text: str
    value: float | None = None
    dimension: Dimension | None = None
    raw_value: float | None = None
    digits: int = 0
    approximate: bool = False
    has_unit: bool = False
    exact: str = ""
    """A number's exact decimal text (``1723435438``, ``5.3``): long integers are compared digit for digit."""
    label: str = ""
    """The word that labels a bare count in the claim (``4 failed`` → ``failed``)."""

    @property
    def is_key_value(self) -> bool:
        """Whether a number is significant enough to be a forged key value: it has a unit or two or more digits."""
        return self.kind != "number" or self.has_unit or self.digits >= 2


def normalize(text: str) -> str:
    """NFKC only (full-width digits, ％ and letters become ASCII); case is kept for the code patterns."""
    return unicodedata.normalize("NFKC", text) if not text.isascii() else text
