"""Knowledge retrieval over markdown documents: exact error-code match → keyword → BM25 (bm25s).

Documents are split into sections at `## ` headings; a hit is a section. Tokens (rules/text/words.py) are
case-folded ASCII words (identifiers keep `_`, hyphenated names are kept whole and split) plus character bigrams of
CJK runs, so "ERR_TIMEOUT 是什么意思" and "支付网关超时" both find their documents without a word segmenter.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import bm25s
import numpy as np

from evigate.errors import InputFileError
from evigate.files import read_text_bounded
from evigate.rules.text.words import cjk_bigrams, normalize, parts, stopwords, words

logger = logging.getLogger(__name__)

_CODE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9])(?![A-Za-z0-9_])")
_JOINERS = "-."
"""A hyphenated or dotted name (pay-gateway, v1.2) is one word, and its parts are words too."""
STOPWORDS = stopwords("core", "cjk_question")
"""The commonest grammar words and the character pairs of a question's frame (是什么意思): no document is about them."""
LAYER_ORDER = ("exact_error_code", "keyword", "bm25")
MAX_SECTIONS_PER_DOCUMENT = 2
MAX_DOCUMENT_BYTES = 5_000_000
"""A knowledge document longer than this (5 MB) is skipped and named, not indexed."""


def tokenize(text: str) -> list[str]:
    """Words (hyphenated names whole and in parts), then CJK character pairs (a lone character as itself) of the
    normalised text, stopwords removed."""
    folded = normalize(text)
    tokens: list[str] = []
    for word in words(folded, _JOINERS):
        pieces = parts(word, _JOINERS)
        tokens.extend(token for token in ([word, *pieces] if len(pieces) > 1 else [word]) if token not in STOPWORDS)
    tokens.extend(pair for pair in cjk_bigrams(folded, lone=True) if pair not in STOPWORDS)
    return tokens


def error_codes(text: str) -> list[str]:
    """Identifier-like codes with an underscore (ERR_TIMEOUT, SLOW_SQL), upper-cased, in order of appearance."""
    return list(dict.fromkeys(match.group(1).upper() for match in _CODE.finditer(text)))


@dataclass(frozen=True)
class Section:
    """One retrievable unit: a `## ` section of a document (or its introduction)."""

    document: str
    title: str
    heading: str
    text: str
    tokens: tuple[str, ...] = field(repr=False)
    codes: frozenset[str] = field(repr=False)


@dataclass
class Hit:
    """A retrieved section with the layer that found it and a relevance level."""

    section: Section
    layer: str
    relevance: str
    score: float


def _split_sections(document: str, markdown: str) -> list[Section]:
    lines = markdown.splitlines()
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), document)
    chunks: list[tuple[str, list[str]]] = [(title, [])]
    for line in lines:
        if line.startswith("## "):
            chunks.append((line[3:].strip(), [line]))
        elif not line.startswith("# "):
            chunks[-1][1].append(line)
    sections = []
    for heading, body in chunks:
        text = "\n".join(body).strip()
        if not text:
            continue
        searchable = f"{document} {title} {heading}\n{text}"
        sections.append(Section(document, title, heading, text, tuple(tokenize(searchable)),
                                frozenset(error_codes(text))))
    return sections


class KnowledgeBase:
    """Sections of every `*.md` under a folder, indexed for the three retrieval layers.

    `skipped` names the documents that could not be read (not UTF-8, a FIFO, too large …) with the reason: one bad
    file leaves the rest of the folder searchable, and `evigate domain check` shows which file was left out.
    """

    def __init__(self, sections: list[Section], skipped: dict[str, str] | None = None) -> None:
        self.sections = sections
        self.skipped: dict[str, str] = dict(skipped or {})
        self.documents = sorted({section.document for section in sections})
        self._bm25 = bm25s.BM25()
        if sections:
            self._bm25.index([list(section.tokens) for section in sections], show_progress=False)
        self._vocabulary = {token for section in sections for token in section.tokens}

    @classmethod
    def from_directory(cls, folder: str | Path) -> KnowledgeBase:
        """Load every markdown file under `folder`; document names are POSIX paths relative to it."""
        root = Path(folder)
        sections: list[Section] = []
        skipped: dict[str, str] = {}
        for path in sorted(root.rglob("*.md")):
            name = path.relative_to(root).as_posix()
            try:
                text = read_text_bounded(path, what="knowledge document", limit=MAX_DOCUMENT_BYTES)
            except InputFileError as exc:
                skipped[name] = str(exc).removeprefix(f"knowledge document {path} ")
                logger.warning("%s", exc)
                continue
            sections.extend(_split_sections(name, text))
        return cls(sections, skipped)

    def search(self, query: str, top_k: int = 3) -> list[Hit]:
        """Best sections for `query`: error-code definitions first, then keyword matches, then BM25.

        Within a layer, hits are ordered by relevance, then by BM25 score against the whole query.
        """
        query_tokens = [token for token in tokenize(query) if token in self._vocabulary]
        scores = (self._bm25.get_scores(query_tokens) if query_tokens and self.sections
                  else np.zeros(len(self.sections)))
        candidates = self._exact_codes(query) + self._keywords(query) + self._bm25_hits(query_tokens, scores, top_k * 3)
        best: dict[int, Hit] = {}
        for index, hit in candidates:
            hit.score = float(scores[index])
            known = best.get(index)
            if known is None or _order(hit) < _order(known):
                best[index] = hit
        ranked: list[Hit] = []
        per_document: dict[str, int] = {}
        for hit in sorted(best.values(), key=_order):
            count = per_document.get(hit.section.document, 0)
            if count < MAX_SECTIONS_PER_DOCUMENT:  # leave room for other documents' views
                per_document[hit.section.document] = count + 1
                ranked.append(hit)
        return ranked[:top_k]

    def _exact_codes(self, query: str) -> list[tuple[int, Hit]]:
        found = []
        for code in error_codes(query):
            for index, section in enumerate(self.sections):
                if code in section.codes:
                    relevance = "high" if section.heading.upper() == code else "medium"
                    found.append((index, Hit(section, "exact_error_code", relevance, 0.0)))
        return found

    def _keywords(self, query: str) -> list[tuple[int, Hit]]:
        named = words(normalize(query), _JOINERS, min_chars=3)
        wanted = [word for word in dict.fromkeys(named) if word not in STOPWORDS]
        found = []
        for index, section in enumerate(self.sections):
            label = normalize(f"{section.document} {section.title} {section.heading}")
            matched = [word for word in wanted if word in label]
            if matched:
                relevance = "high" if len(matched) / len(wanted) >= 0.5 else "medium"
                found.append((index, Hit(section, "keyword", relevance, 0.0)))
        return found

    def _bm25_hits(self, query_tokens: list[str], scores: np.ndarray, limit: int) -> list[tuple[int, Hit]]:
        wanted = set(query_tokens)
        found = []
        for index in np.argsort(-scores, kind="stable")[:limit]:
            if scores[index] <= 0:
                break
            section = self.sections[int(index)]
            coverage = len(wanted & set(section.tokens)) / len(wanted)
            relevance = "high" if coverage >= 0.6 else "medium" if coverage >= 0.3 else "low"
            found.append((int(index), Hit(section, "bm25", relevance, 0.0)))
        return found


def _order(hit: Hit) -> tuple[int, int, float]:
    return (LAYER_ORDER.index(hit.layer), -_rank(hit.relevance), -hit.score)


def _rank(relevance: str) -> int:
    return {"high": 2, "medium": 1, "low": 0}.get(relevance, 0)


@functools.lru_cache(maxsize=8)
def _cached(folder: str) -> KnowledgeBase:
    return KnowledgeBase.from_directory(folder)


def load_knowledge_base(folder: str | Path) -> KnowledgeBase:
    """The knowledge base of a folder, built once per process."""
    return _cached(str(Path(folder).resolve()))
