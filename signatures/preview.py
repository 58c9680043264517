"""The one truncation format of evigate: a cut text ends with ``…[truncated N chars]``.

Pure functions, shared by the Toolbox (which caps a tool's output), the audit store (which keeps a short preview
of it) and the Gatekeeper (which must know where a preview stops). A text the tool itself ended with "…" or
"(truncated)" is not truncated: only this marker, with its count, says that something was cut.
"""

from __future__ import annotations

import re

TRUNCATION_MARKER = "…[truncated {count} chars]"
"""Appended after the kept prefix of a text that was cut (``count`` = characters dropped)."""

_MARKER_AT_END = re.compile(r"…\[truncated (?P<count>\d+) chars\]\Z")


def truncate(text: str, keep: int) -> str:
    """``text`` itself if it fits in ``keep`` characters, else its first ``keep`` characters plus the marker.

    The marker comes *after* the kept prefix, so ``truncate(text, n)[:n] == text[:n]`` always holds and an excerpt
    quoted from the start of the text still matches verbatim.
    """
    keep = max(0, keep)
    if len(text) <= keep:
        return text
    return text[:keep] + TRUNCATION_MARKER.format(count=len(text) - keep)


def split_preview(preview: str) -> tuple[str, int]:
    """``(kept_text, dropped_char_count)`` of a possibly cut text; ``dropped_char_count`` is 0 for a whole one.

    A text that happens to end with marker-shaped text is indistinguishable from a cut one; callers that must be
    exact compare against the whole recorded output (``ToolInvocation.output``).
    """
    match = _MARKER_AT_END.search(preview)
    if match is None:
        return preview, 0
    return preview[: match.start()], int(match["count"])
