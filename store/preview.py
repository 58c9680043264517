"""The capped ``output_preview`` of a tool output (the format itself lives in :mod:`evigate.signatures.preview`)."""

from __future__ import annotations

from evigate.errors import AuditValueError
from evigate.signatures.preview import TRUNCATION_MARKER, split_preview, truncate

__all__ = ["TRUNCATION_MARKER", "make_preview", "split_preview"]


def make_preview(output: str, preview_chars: int) -> str:
    """``output`` itself if it fits in ``preview_chars``, else its first ``preview_chars`` chars plus the marker.

    The marker comes *after* the kept prefix, so ``preview[:preview_chars] == output[:preview_chars]`` always
    holds and an excerpt quoted from the output's start still matches the preview verbatim.
    """
    if preview_chars < 0:
        raise AuditValueError(f"preview_chars must be >= 0, got {preview_chars}")
    return truncate(output, preview_chars)
