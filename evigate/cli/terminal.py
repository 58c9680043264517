"""Printing data to a terminal safely: no markup interpretation, no control sequences, one-line errors.

Queries, answers and tool outputs are data. Rich would read "[/api/pay]" or "[bold]" in them as markup (and raise
MarkupError on a closing tag it never opened), and a tool output may carry ANSI escapes that repaint the screen.
Everything data-derived is printed as a :class:`rich.text.Text` built by :func:`plain`.
"""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape
from rich.text import Text

# CSI / OSC / other ESC sequences first (so their parameters go too), then every C0/C1 control but \t and \n.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """``text`` without terminal escape sequences and control characters (tabs and newlines stay)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n")))


_C1 = re.compile(r"[\x7f-\x9f]")


def json_for_terminal(text: str) -> str:
    """JSON text with DEL and the C1 controls (U+009B, the one-byte CSI, among them) written as ``\\u`` escapes: the
    same JSON value, but a terminal never receives the raw character (``json.dumps`` escapes only C0)."""
    return _C1.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def safe_markup(value: object) -> str:
    """Data for a Rich markup string (a table cell beside styled text): controls stripped, markup escaped."""
    return escape(strip_controls("" if value is None else str(value)))


def plain(value: object, limit: int | None = None) -> Text:
    """Data as literal terminal text: controls stripped, markup never interpreted, optionally cut to ``limit``."""
    text = strip_controls("" if value is None else str(value))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text)


def print_error(console: Console, message: object) -> None:
    """One line: ``error: <message>`` with the message printed literally."""
    console.print(Text.assemble(("error: ", "bold red"), strip_controls(str(message))), soft_wrap=True)


__all__ = ["escape", "json_for_terminal", "plain", "print_error", "safe_markup", "strip_controls"]
