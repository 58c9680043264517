"""The capped ``output_preview`` of a tool output, and how to tell a truncated preview from a whole one."""

from __future__ import annotations

import re

from evigate.errors import AuditValueError

TRUNCATION_MARKER = "…[truncated {count} chars]"
"""Appended after the first ``preview_chars`` characters of an output that was cut (``count`` = chars dropped)."""

_MARKER_AT_END = re.compile(r"…\[truncated (?P<count>\d+) chars\]\Z")


def make_preview(output: str, preview_chars: int) -> str:
    """``output`` itself if it fits in ``preview_chars``, else its first ``preview_chars`` chars plus the marker.

    The marker comes *after* the kept prefix, so ``preview[:preview_chars] == output[:preview_chars]`` always
    holds and an excerpt quoted from the output's start still matches the preview verbatim.
    """
    if preview_chars < 0:
        raise AuditValueError(f"preview_chars must be >= 0, got {preview_chars}")
    if len(output) <= preview_chars:
        return output
    return output[:preview_chars] + TRUNCATION_MARKER.format(count=len(output) - preview_chars)


def split_preview(preview: str) -> tuple[str, int]:
    """``(kept_text, dropped_char_count)`` of a preview; ``dropped_char_count`` is 0 for a whole output.

    An output that happens to end with marker-shaped text is indistinguishable from a truncated one; callers
    that must be exact compare against :meth:`evigate.store.AuditStore.invocation_output`.
    """
    match = _MARKER_AT_END.search(preview)
    if match is None:
        return preview, 0
    return preview[: match.start()], int(match["count"])
