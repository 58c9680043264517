"""Language-neutral text primitives: normalisation and excerpt similarity for Chinese, English and mixed text.

No word segmentation: similarity works on characters. A "compact" form drops whitespace and punctuation so that
``cpu=92%`` and ``"cpu": "92%"`` compare equal, and matched character blocks are weighted so that a CJK character
(which carries about a word of meaning) counts double.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel

from evigate.rules.thresholds import THRESHOLDS

# Everything that is neither a letter, a digit, CJK nor one of the characters that carry meaning inside identifiers,
# numbers and units (ERR_TIMEOUT, pay-gateway, 5.3s, 92%, /api/pay, #123).
_SEPARATORS = re.compile(r"[^\w.%/#@+\-]+")
_EDGE_PUNCTUATION = " .,;:!?。，；：！？、\"'“”‘’()（）[]【】<>《》-"
_ELLIPSIS = re.compile(r"\s*(?:\.{3,}|…+|⋯+)\s*")
_WHITESPACE = re.compile(r"\s+")
INVISIBLE_CHARS = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e"
                   "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0")
"""Format characters that render as nothing (zero-width spaces and joiners, bidi marks, the BOM): a character class."""
INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")
_VISIBLE = re.compile(f"[^\\s{INVISIBLE_CHARS}\x00-\x1f\x7f-\x9f]")


def first_visible(text: str, start: int = 0) -> int:
    """The offset of the first character a reader would see (not whitespace, invisible or control), or -1."""
    hit = _VISIBLE.search(text, start)
    return hit.start() if hit else -1
MAX_EXCERPT_CHARS = 2000
"""Longer excerpts are scored on their first characters only: this bounds the alignment cost on hostile input."""
MIN_BLOCK_WEIGHT = THRESHOLDS.text.min_block_weight
"""A matched block lighter than this (a 4-letter run, a CJK pair) is treated as chance."""


# Characters NFKC changes in a way that matters for matching: full-width letters, digits and %, the ideographic
# space, micro sign, roman numerals and CJK unit symbols (㎳). Full-width punctuation (，：) is left alone: it is
# dropped by compact() anyway, and NFKC over 20 KB of Chinese costs more than the rest of a validation.
_NEEDS_NFKC = re.compile(r"[\uff05\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\u3000\u00b5\u2160-\u217f\u3371-\u33df]")


def fold(text: str) -> str:
    """Case-folded text with full-width letters and digits made ASCII (NFKC only where it changes matching)."""
    if not text.isascii() and _NEEDS_NFKC.search(text):
        text = unicodedata.normalize("NFKC", text)
    return text.casefold()


def compact(folded: str) -> str:
    """Drop whitespace and punctuation from already-folded text."""
    return _SEPARATORS.sub("", folded)


def restates(text: str, other: str, min_similarity: float = THRESHOLDS.text.restates_similarity) -> bool:
    """Whether `text` only says `other` again: contained in it, or Indel-similar to it, after folding."""
    text, other = fold(text.strip()), fold(other.strip())
    return bool(text) and (text in other or fuzz.ratio(text, other) >= 100 * min_similarity)


def squash_whitespace(text: str) -> str:
    """Collapse runs of whitespace to one space."""
    return _WHITESPACE.sub(" ", text).strip()


CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002a6df"
"""CJK ideographs (with extension A, B and the compatibility block), kana and hangul, as the inside of a character
class: characters that carry about a word each. The one CJK range every reader of text uses (issue 21)."""
CJK = re.compile(f"[{CJK_CHARS}]")


def is_cjk(char: str) -> bool:
    """True for one CJK ideograph, kana or hangul character (see :data:`CJK_CHARS`)."""
    return CJK.fullmatch(char) is not None


def weight(text: str) -> int:
    """Information weight of a compact string: 2 per CJK character, 1 per other character."""
    return 2 * len(text) - len(CJK.sub("", text))


def block_coverage(needle: str, window: str) -> float:
    """Share of ``needle``'s weight covered by blocks it shares, in order, with ``window`` (both compact).

    Short chance matches (below :data:`MIN_BLOCK_WEIGHT`) do not count, which is what keeps a fabricated but
    topical excerpt far below a verbatim or lightly edited one.
    """
    total = weight(needle)
    if total == 0:
        return 0.0
    matched = 0
    for block in Indel.opcodes(needle, window):
        if block.tag == "equal":
            piece = needle[block.src_start:block.src_end]
            piece_weight = weight(piece)
            if piece_weight >= MIN_BLOCK_WEIGHT:
                matched += piece_weight
    return matched / total


@lru_cache(maxsize=256)
def _casefolded(haystack: str) -> str:
    """A haystack case-folded once per text object (the same invocation output is compared many times)."""
    return haystack.casefold()


def _window_coverage(probe: str, haystack: str, needle: str) -> float:
    """Align ``probe`` (the segment) on ``haystack`` without compacting 20 KB, then score only the window."""
    alignment = fuzz.partial_ratio_alignment(probe, haystack)
    if alignment is None:  # pragma: no cover - rapidfuzz returns None only with a score cutoff
        return 0.0
    margin = len(probe)
    window = compact(fold(haystack[max(0, alignment.dest_start - margin):alignment.dest_end + margin]))
    if needle in window:
        return 1.0
    if len(needle) >= len(window):
        return block_coverage(needle, window)
    inner = fuzz.partial_ratio_alignment(needle, window)
    if inner is None:  # pragma: no cover
        return 0.0
    return block_coverage(needle, window[inner.dest_start:inner.dest_end])


def _segment_similarity(segment: str, haystack: str, truncated: bool) -> float:
    """Similarity of one excerpt segment with one haystack (both as written), in [0, 1]."""
    if segment in haystack:
        return 1.0
    needle = compact(fold(segment))
    if not needle:
        return 0.0
    if truncated and _runs_past_end(needle, haystack):
        return 1.0
    if len(segment) >= len(haystack):
        return block_coverage(needle, compact(fold(haystack)))
    # One alignment, case-insensitive; the output is case-folded once per text and reused by every excerpt.
    return _window_coverage(segment.casefold(), _casefolded(haystack), needle)


MIN_TRUNCATION_OVERLAP = THRESHOLDS.text.min_truncation_overlap
"""Characters of an excerpt that must match the very end of a truncated preview before the rest is excused."""
MAX_TRUNCATION_NEEDLE = 400


def _runs_past_end(needle: str, haystack: str) -> bool:
    """True when the excerpt starts inside the last characters of a truncated preview and runs past its end."""
    needle = needle[:MAX_TRUNCATION_NEEDLE]
    tail = compact(fold(haystack[-(4 * len(needle) + 32):]))
    longest = min(len(needle), len(tail))
    return any(tail.endswith(needle[:size]) for size in range(longest, MIN_TRUNCATION_OVERLAP - 1, -1))


MIN_ALIGNED_SCORE = THRESHOLDS.text.min_aligned_score
"""partial_ratio (0–100) above which an excerpt segment is taken as a near copy of one place in the output."""


def aligned_windows(excerpt: str, haystack: str, margin: int = 8) -> list[str]:
    """For each segment of an excerpt that nearly copies one place of ``haystack``, that place (plus a margin).

    Empty when any segment is no near copy: a paraphrase has no one place its values must come from.
    """
    windows = []
    for segment in _segments(excerpt):
        if len(segment) < 12 or len(segment) > len(haystack):
            return []
        alignment = fuzz.partial_ratio_alignment(segment, haystack, score_cutoff=MIN_ALIGNED_SCORE)
        if alignment is None:
            return []
        windows.append(haystack[max(0, alignment.dest_start - margin):alignment.dest_end + margin])
    return windows


MIN_LOCATED_SCORE = THRESHOLDS.text.min_located_score
"""partial_ratio (0–100) below which an aligned window is no place worth showing as the excerpt's source."""


def locate_excerpt(excerpt: str, haystack: str) -> list[tuple[int, int, float]]:
    """Where an excerpt sits in ``haystack``: ``(start, end, score)`` offsets into ``haystack`` as written.

    The whole excerpt found verbatim gives one span with score 1.0. Otherwise each "A … B" segment gives the
    span the similarity rule itself aligns (:func:`_window_coverage`: a case-insensitive ``partial_ratio``
    alignment), score 1.0 where the segment occurs as written; segments with no place scoring
    :data:`MIN_LOCATED_SCORE` are left out. Offsets stay exact: case-folding that changes a text's length (ß → ss)
    falls back to aligning the text as written.
    """
    verbatim = excerpt.strip()
    if verbatim and (start := haystack.find(verbatim)) >= 0:
        return [(start, start + len(verbatim), 1.0)]
    folded = _casefolded(haystack)
    same_length = len(folded) == len(haystack)
    spans: list[tuple[int, int, float]] = []
    for segment in _segments(excerpt):
        start = haystack.find(segment)
        if start >= 0:
            spans.append((start, start + len(segment), 1.0))
            continue
        probe, target = (segment.casefold(), folded) if same_length else (segment, haystack)
        alignment = fuzz.partial_ratio_alignment(probe, target, score_cutoff=MIN_LOCATED_SCORE)
        if alignment is not None and alignment.dest_end > alignment.dest_start:
            spans.append((alignment.dest_start, alignment.dest_end, round(alignment.score / 100, 4)))
    return spans


def _segments(excerpt: str) -> list[str]:
    """An excerpt cut at ellipses ("A … B"), edges trimmed, empty pieces dropped."""
    written = squash_whitespace(excerpt[:MAX_EXCERPT_CHARS])
    segments = [piece.strip(_EDGE_PUNCTUATION) for piece in _ELLIPSIS.split(written)]
    return [piece for piece in segments if compact(fold(piece))]


def content_weight(text: str) -> int:
    """The weight :func:`excerpt_similarity` gives a text: what is left to match once ellipses and punctuation go."""
    return sum(weight(compact(fold(piece))) for piece in _segments(text))


def excerpt_similarity(excerpt: str, haystacks: Iterable[tuple[str, bool]]) -> float:
    """Best similarity in [0, 1] of an excerpt with any of ``haystacks`` (text as written, is-truncated flag).

    An excerpt a model stitched from distant places ("A … B") is scored segment by segment, weighted by length.
    """
    segments = _segments(excerpt)
    if not segments:
        return 0.0
    sources = list(haystacks)
    if not sources:
        return 0.0
    weights = [weight(compact(fold(piece))) for piece in segments]
    total = sum(weights) or 1
    score = 0.0
    for piece, piece_weight in zip(segments, weights, strict=True):
        best = 0.0
        for haystack, truncated in sources:
            best = max(best, _segment_similarity(piece, haystack, truncated))
            if best >= 1.0:
                break
        score += best * piece_weight
    return min(1.0, score / total)
