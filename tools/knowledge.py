"""`lookup_knowledge`: runbooks and error-code documents, with retrieval layers and relevance levels."""

from __future__ import annotations

from pydantic import Field

from evigate.tools.base import Tool, ToolArgs, ToolOutput
from evigate.tools.formatting import one_line
from evigate.tools.retrieval import KnowledgeBase
from evigate.tools.source import DataSource

SECTION_CHARS = 600
EXCERPT_CHARS = 240


class LookupKnowledgeArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=500, description="error code, symptom or question, Chinese or English")
    top_k: int = Field(default=3, ge=1, le=10, description="number of document sections to return")


class LookupKnowledge(Tool):
    """Search the knowledge base (exact error code → keyword → BM25)."""

    name = "lookup_knowledge"
    description = (
        "Search runbooks and error-code documents (e.g. payment/errors.md, database/hikaricp.md). Returns the best "
        "document sections with source path, retrieval layer and relevance. Knowledge describes general patterns, "
        "not what happened in this incident."
    )
    Args = LookupKnowledgeArgs

    def run(self, args: LookupKnowledgeArgs, world: DataSource) -> ToolOutput:
        return self.answer(args, world.knowledge)

    def answer(self, args: LookupKnowledgeArgs, knowledge: KnowledgeBase) -> ToolOutput:
        """The best sections of `knowledge` for the query, as quotable text plus retrieval details."""
        hits = knowledge.search(args.query, args.top_k)
        details = {
            "query": args.query,
            "retrieval_layers": list(dict.fromkeys(hit.layer for hit in hits)),
            "relevance_levels": list(dict.fromkeys(hit.relevance for hit in hits)),
            "source_documents": list(dict.fromkeys(hit.section.document for hit in hits)),
            "hits": [
                {"source_document": hit.section.document, "section": hit.section.heading,
                 "retrieval_layer": hit.layer, "relevance": hit.relevance, "score": round(hit.score, 3),
                 "excerpt": one_line(hit.section.text, EXCERPT_CHARS)}
                for hit in hits
            ],
        }
        if not hits:
            return ToolOutput(text=f'lookup_knowledge "{one_line(args.query, 120)}": no rows (no matching documents)',
                              retrieval_details=details)
        lines = [f'lookup_knowledge "{one_line(args.query, 120)}": {len(hits)} sections']
        for rank, hit in enumerate(hits, start=1):
            section = hit.section
            lines.append(f"[{rank}] {section.document} § {section.heading} "
                         f"(layer={hit.layer}, relevance={hit.relevance})")
            body = section.text if len(section.text) <= SECTION_CHARS else section.text[: SECTION_CHARS - 1] + "…"
            lines.extend(line for line in body.splitlines() if line.strip())
        return ToolOutput(text="\n".join(lines), retrieval_details=details)
