"""The demo world's entity vocabulary: its services, error codes, identifiers and metric hints.

`extract_query_entities` is the generic extractor (evigate.rules.text.question) driven by this vocabulary, with
bare clock times falling on the world day.
"""

from __future__ import annotations

from typing import Any

from evigate.demo.catalog import ERROR_CODES, NOT_SERVICE_TERMS, SERVICE_ALIASES, SERVICES, WORLD_DAY
from evigate.rules.text.question import EntityExtractor
from evigate.rules.text.vocabulary import IdPattern, IdRegex, Vocabulary

_ASCII_WORD = r"A-Za-z0-9_"

DEMO_VOCABULARY = Vocabulary(
    services=list(SERVICES),
    service_aliases=dict(SERVICE_ALIASES),
    not_service_terms=list(NOT_SERVICE_TERMS),
    error_codes=list(ERROR_CODES),
    error_code_pattern=r"(ERR_[A-Z0-9]+(?:_[A-Z0-9]+)*)",
    identifiers={
        "order_id": IdPattern(type="int", patterns=[
            rf"(?:订单(?:号|编号|id|ID)?|(?<![{_ASCII_WORD}])order(?:[ _-]?(?:id|no|number))?)\s*[:：=#]?\s*#?\s*"
            rf"(\d{{1,12}})(?![{_ASCII_WORD}])",
        ]),
        "trace_id": IdPattern(case="lower", patterns=[
            r"(?:trace[_ -]?id|trace|链路)\s*[:：=]?\s*([0-9a-f]{16,32})(?![0-9a-z])",
            IdRegex(regex=r"(?-i:(?<![0-9A-Za-z])([0-9a-f]{16}|[0-9a-f]{32})(?![0-9A-Za-z]))",
                    must_match=["[a-f]", r"\d"]),
        ]),
        "http_status": IdPattern(type="int", handle=False, patterns=[
            r"(?:HTTP|状态码|status)\s*[:：=]?\s*([45]\d\d)(?!\d)",
        ]),
    },
    metrics={
        "pool_pending": r"连接池|hikari|pool[ _]?(?:active|idle|pending)?|pending",
        "cache_hit_rate": r"命中率|hit[ _]?rate|缓存",
        "latency_p99": r"p99|延迟|latency|耗时|响应时间|rt(?![a-z])",
        "error_rate": r"错误率|error[ _]?rate|失败率",
        "cpu_usage": r"cpu",
        "memory_usage": r"内存|memory",
        "qps": r"qps|流量|请求量",
        "deadlock_count": r"死锁|deadlock",
        "slow_query_count": r"慢\s*sql|slow[ _]?(?:sql|query)",
        "http_429_count": r"429|限流|rate[ _]?limit",
    },
)
"""Chinese names and informal spellings map through SERVICE_ALIASES; codes outside ERR_* come from ERROR_CODES."""

DEMO_EXTRACTOR = EntityExtractor(DEMO_VOCABULARY, WORLD_DAY.date())


def extract_query_entities(query: str) -> dict[str, Any]:
    """Entities named in an incident question (see `EntityExtractor`): order_ids, error_codes, services,
    trace_ids, http_statuses, metrics, times and time_window; dates default to the world day."""
    return DEMO_EXTRACTOR.extract(query)
