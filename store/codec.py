"""JSON in and out of the audit tables: strict encoding (Unicode kept) and row-to-dict decoding."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from evigate.errors import AuditValueError


def to_json_text(value: Any, what: str) -> str:
    """Serialise ``value`` (JSON-compatible data or a pydantic model) with Unicode kept; raise on anything else."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        # allow_nan=False: NaN/Infinity are not JSON, and DuckDB's JSON type would reject them later anyway.
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise AuditValueError(f"{what} must be JSON-serialisable (str/int/float/bool/None/list/dict): {exc}") from exc


def from_json_text(text: str | None) -> Any:
    """Parse a JSON column value (DuckDB hands JSON columns to Python as text); ``None`` stays ``None``."""
    return None if text is None else json.loads(text)


def require_finite(value: float, what: str) -> float:
    """``value`` as a float, rejecting NaN, infinities and negatives (latencies, scores)."""
    number = float(value)
    if math.isnan(number) or math.isinf(number) or number < 0:
        raise AuditValueError(f"{what} must be a finite number >= 0, got {value!r}")
    return number


def rows_to_dicts(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], json_columns: Mapping[str, Callable[[], Any]]
) -> list[dict[str, Any]]:
    """Rows as dicts keyed by column; ``json_columns`` are parsed, and NULL becomes the column's default()."""
    records = []
    for row in rows:
        record = dict(zip(columns, row, strict=True))
        for column, default in json_columns.items():
            if column in record:
                parsed = from_json_text(record[column])
                record[column] = default() if parsed is None else parsed
        records.append(record)
    return records
