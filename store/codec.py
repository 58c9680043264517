"""Values in and out of the audit tables: text made storable, strict JSON (Unicode kept), row-to-dict decoding."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from evigate.errors import AuditValueError

REPLACEMENT_CHARACTER = "\ufffd"
"""What the store writes in place of text no database can hold (the visible record that the text was cleaned)."""

_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(value: Any) -> bool:
    """Whether any string inside ``value`` (dict keys too) holds a surrogate code point: text that is not Unicode."""
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, Mapping):
        return any(has_surrogates(key) or has_surrogates(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(has_surrogates(item) for item in value)
    return False


def clean_text(text: str) -> str:
    """``text`` as every backend can store it: lone surrogates and NUL become U+FFFD, everything else is kept.

    Lone surrogates reach evigate from undecodable argv/stdin bytes (Python's surrogateescape) and from model JSON
    (``"\\ud800"``); neither UTF-8 nor PostgreSQL text can hold them, nor a NUL. A surrogate *pair* that arrived
    split into two code points is joined back into the character it encodes.
    """
    if _UNSTORABLE.search(text) is None:
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return joined.replace("\x00", REPLACEMENT_CHARACTER)


def clean_value(value: Any) -> Any:
    """``value`` with :func:`clean_text` applied to every string inside it (dict keys too)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {clean_value(key) if isinstance(key, str) else key: clean_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(item) for item in value]
    return value


def to_json_text(value: Any, what: str) -> str:
    """Serialise ``value`` (JSON-compatible data or a pydantic model) with Unicode kept; raise on anything else.

    Strings are cleaned first (:func:`clean_text`), so the text is storable by every backend.
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    value = clean_value(value)
    try:
        # allow_nan=False: NaN/Infinity are not JSON, and DuckDB's JSON type would reject them later anyway.
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise AuditValueError(f"{what} must be JSON-serialisable (str/int/float/bool/None/list/dict): {exc}") from exc


def from_json_text(text: str | None) -> Any:
    """Parse a JSON column value (the backends hand JSON columns to Python as text); ``None`` stays ``None``."""
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
