"""Knowledge retrieval over markdown documents: exact error-code match → keyword → BM25 (bm25s).

Documents are split into sections at `## ` headings; a hit is a section. Tokens are lower-cased ASCII words
(identifiers keep `_`, hyphenated names are kept whole and split) plus character bigrams of CJK runs, so
"ERR_TIMEOUT 是什么意思" and "支付网关超时" both find their documents without a word segmenter.
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

logger = logging.getLogger(__name__)

_ASCII_TOKEN = re.compile(r"[a-z0-9_]+(?:[-.][a-z0-9_]+)*")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CODE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9])(?![A-Za-z0-9_])")
ASCII_STOPWORDS = frozenset({
    "a", "an", "and", "are", "be", "by", "can", "do", "does", "for", "from", "how", "in", "is", "it", "of", "on",
    "or", "the", "to", "what", "when", "where", "which", "who", "why", "with",
})
CJK_STOPWORDS = frozenset(
    ["是什", "什么", "么意", "意思", "怎么", "么办", "为什", "么会", "请问", "一下", "是否", "这个", "那个", "么原"]
)
LAYER_ORDER = ("exact_error_code", "keyword", "bm25")
MAX_SECTIONS_PER_DOCUMENT = 2
MAX_DOCUMENT_BYTES = 5_000_000
"""A knowledge document longer than this (5 MB) is skipped and named, not indexed."""


def tokenize(text: str) -> list[str]:
    """ASCII words (hyphenated names whole and in parts) and CJK character bigrams, stopwords removed."""
    tokens: list[str] = []
    lowered = text.lower()
    for match in _ASCII_TOKEN.finditer(lowered):
        word = match.group(0)
        parts = re.split(r"[-.]", word)
        for token in ([word, *parts] if len(parts) > 1 else [word]):
            if token and token not in ASCII_STOPWORDS:
                tokens.append(token)
    for run in _CJK_RUN.findall(text):
        grams = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        tokens.extend(gram for gram in grams if gram not in CJK_STOPWORDS)
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
        words = [word for word in dict.fromkeys(_ASCII_TOKEN.findall(query.lower()))
                 if len(word) >= 3 and word not in ASCII_STOPWORDS]
        found = []
        for index, section in enumerate(self.sections):
            label = f"{section.document} {section.title} {section.heading}".lower()
            matched = [word for word in words if word in label]
            if matched:
                relevance = "high" if len(matched) / len(words) >= 0.5 else "medium"
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
