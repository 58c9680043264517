"""`lookup_knowledge`: Chinese and English retrieval with layers, relevance levels and source documents."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evigate.demo import demo_toolbox
from evigate.store import AuditStore
from evigate.tools import DataSource, Toolbox, tokenize
from evigate.tools.retrieval import KnowledgeBase, error_codes


def test_chinese_error_code_question_finds_payment_errors(toolbox: Toolbox) -> None:
    result = toolbox.call("lookup_knowledge", query="ERR_TIMEOUT 是什么意思")
    assert result.success
    details = result.retrieval_details
    assert details["source_documents"][0] == "payment/errors.md"
    assert details["hits"][0] | {"score": 0, "excerpt": ""} == {
        "source_document": "payment/errors.md", "section": "ERR_TIMEOUT", "retrieval_layer": "exact_error_code",
        "relevance": "high", "score": 0, "excerpt": ""}
    assert "exact_error_code" in details["retrieval_layers"] and "high" in details["relevance_levels"]
    assert "[1] payment/errors.md § ERR_TIMEOUT (layer=exact_error_code, relevance=high)" in result.output
    assert "readTimeout=3000ms" in result.output


def test_chinese_only_and_keyword_queries(toolbox: Toolbox) -> None:
    pool = toolbox.call("lookup_knowledge", query="连接池耗尽怎么排查", top_k=2)
    assert pool.retrieval_details["source_documents"][0] == "database/hikaricp.md"
    assert pool.retrieval_details["retrieval_layers"] == ["bm25"]
    assert len(pool.retrieval_details["hits"]) == 2
    hikari = toolbox.call("lookup_knowledge", query="HikariCP")
    assert hikari.retrieval_details["hits"][0]["retrieval_layer"] == "keyword"
    # at most two sections per document, so a third view comes from elsewhere
    assert [hit["source_document"] for hit in hikari.retrieval_details["hits"]][:2] == ["database/hikaricp.md"] * 2
    avalanche = toolbox.call("lookup_knowledge", query="缓存雪崩 命中率骤降")
    assert "cache/redis-avalanche.md" in avalanche.retrieval_details["source_documents"]


def test_no_match(toolbox: Toolbox) -> None:
    result = toolbox.call("lookup_knowledge", query="完全无关的鲸鱼歌声")
    assert result.success and "no rows" in result.output and result.retrieval_details["hits"] == []


def test_own_knowledge_folder(tmp_path, store: AuditStore, session_id: str) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "oncall.md").write_text("# 值班表\n\n## 周末\n周末值班：小王，电话 123。\n", encoding="utf-8")
    toolbox = demo_toolbox(store, session_id, source=DataSource(store, knowledge=tmp_path))
    result = toolbox.call("lookup_knowledge", query="周末谁值班")
    assert result.retrieval_details["source_documents"] == ["team/oncall.md"]


def test_tokenizer_mixes_bigrams_and_words() -> None:
    assert tokenize("支付网关 pay-gateway ERR_TIMEOUT") == [
        "pay-gateway", "pay", "gateway", "err_timeout", "支付", "付网", "网关"]
    assert tokenize("是什么意思") == []
    assert error_codes("err_timeout 和 SLOW_SQL，ERR_TIMEOUT") == ["ERR_TIMEOUT", "SLOW_SQL"]


@given(st.text(max_size=200), st.integers(min_value=1, max_value=10))
def test_search_never_fails_and_respects_top_k(query: str, top_k: int) -> None:
    hits = _knowledge().search(query, top_k)
    assert len(hits) <= top_k
    assert all(hit.relevance in {"high", "medium", "low"} for hit in hits)
    assert all(hit.layer in {"exact_error_code", "keyword", "bm25"} for hit in hits)


def _knowledge() -> KnowledgeBase:
    from evigate.demo import knowledge_dir
    from evigate.tools import load_knowledge_base

    return load_knowledge_base(knowledge_dir())
