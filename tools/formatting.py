"""Small text helpers shared by the tools: compact numbers, one-line messages."""

from __future__ import annotations

MAX_MESSAGE_CHARS = 400


def number(value: float) -> str:
    """5300 → "5300", 92.456 → "92.46", 0.1 → "0.1" (no exponent, no trailing zeros)."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def with_unit(value: float, unit: str | None) -> str:
    """"5300ms", "92.5%", or the bare number when the unit is not a suffix one."""
    return f"{number(value)}{unit}" if unit in ("ms", "%") else number(value)


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Text on a single line (newlines shown as spaces), clipped with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
