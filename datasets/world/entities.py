"""Find the entities of an incident question (order ids, error codes, services, trace ids, times, metrics).

Pure regular expressions, no I/O, so the plan mode can fill skill templates deterministically. Patterns use ASCII
look-arounds instead of `\\b` because Python treats CJK characters as word characters ("ERR_TIMEOUT是什么"
has no word boundary after the code).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from evigate.datasets.world.catalog import ERROR_CODES, SERVICE_ALIASES, SERVICES, WORLD_DAY

_ASCII_WORD = r"A-Za-z0-9_"
_ORDER_ID = re.compile(
    rf"(?:订单(?:号|编号|id|ID)?|(?<![{_ASCII_WORD}])order(?:[ _-]?(?:id|no|number))?)\s*[:：=#]?\s*#?\s*(\d{{1,12}})"
    rf"(?![{_ASCII_WORD}])",
    re.IGNORECASE,
)
_ERROR_CODE = re.compile(rf"(?<![{_ASCII_WORD}])(ERR_[A-Z0-9]+(?:_[A-Z0-9]+)*)(?![{_ASCII_WORD}])", re.IGNORECASE)
_OTHER_CODES = sorted((code for code in ERROR_CODES if not code.startswith("ERR_")), key=len, reverse=True)
_KNOWN_CODES = re.compile(
    rf"(?<![{_ASCII_WORD}])({'|'.join(_OTHER_CODES)})(?![{_ASCII_WORD}])",
    re.IGNORECASE,
)
_TRACE_LABELLED = re.compile(r"(?:trace[_ -]?id|trace|链路)\s*[:：=]?\s*([0-9a-f]{16,32})(?![0-9a-z])", re.IGNORECASE)
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])([0-9a-f]{16}|[0-9a-f]{32})(?![0-9A-Za-z])")
_HTTP_STATUS = re.compile(r"(?:HTTP|状态码|status)\s*[:：=]?\s*([45]\d\d)(?!\d)", re.IGNORECASE)
_TIME = re.compile(
    r"(?:(20\d\d)[-/年](\d{1,2})[-/月](\d{1,2})日?\s*T?\s*)?(?<!\d)([01]?\d|2[0-3])\s*(?:[:：]|点)\s*([0-5]\d)"
    r"(?:\s*[:：]\s*([0-5]\d))?"
)
_SERVICE = re.compile(
    r"(?<![a-z0-9-])(" + "|".join(re.escape(s) for s in sorted(SERVICES, key=len, reverse=True)) + r")(?![a-z0-9-])",
    re.IGNORECASE,
)
_METRIC_HINTS: tuple[tuple[str, str], ...] = (
    (r"连接池|hikari|pool[ _]?(?:active|idle|pending)?|pending", "pool_pending"),
    (r"命中率|hit[ _]?rate|缓存", "cache_hit_rate"),
    (r"p99|延迟|latency|耗时|响应时间|rt(?![a-z])", "latency_p99"),
    (r"错误率|error[ _]?rate|失败率", "error_rate"),
    (r"cpu", "cpu_usage"),
    (r"内存|memory", "memory_usage"),
    (r"qps|流量|请求量", "qps"),
    (r"死锁|deadlock", "deadlock_count"),
    (r"慢\s*sql|slow[ _]?(?:sql|query)", "slow_query_count"),
    (r"429|限流|rate[ _]?limit", "http_429_count"),
)
WINDOW_PADDING = timedelta(minutes=15)


def _unique(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _services(query: str) -> list[str]:
    found: list[tuple[int, str]] = [(m.start(), m.group(1).lower()) for m in _SERVICE.finditer(query)]
    lowered = query.lower()
    taken = [(m.start(), m.end()) for m in _SERVICE.finditer(query)]
    for alias in sorted(SERVICE_ALIASES, key=len, reverse=True):  # longest first: 支付网关 before 网关
        start = lowered.find(alias)
        while start != -1:
            end = start + len(alias)
            if not any(s < end and start < e for s, e in taken):
                found.append((start, SERVICE_ALIASES[alias]))
                taken.append((start, end))
            start = lowered.find(alias, end)
    return _unique([service for _, service in sorted(found)])


def _times(query: str) -> list[datetime]:
    moments = []
    for match in _TIME.finditer(query):
        year, month, day, hour, minute, second = match.groups()
        try:
            date = datetime(int(year), int(month), int(day)) if year else WORLD_DAY
            moments.append(date.replace(hour=int(hour), minute=int(minute), second=int(second or 0)))
        except ValueError:  # 2026-13-45 is not a date; skip it rather than guess
            continue
    return moments


def _time_window(moments: list[datetime]) -> str | None:
    if not moments:
        return None
    start, end = min(moments), max(moments)
    if start == end:
        start, end = start - WINDOW_PADDING, end + WINDOW_PADDING
    return f"{start:%Y-%m-%d %H:%M}/{end:%Y-%m-%d %H:%M}"


def extract_query_entities(query: str) -> dict[str, Any]:
    """Entities named in an incident question, in order of appearance, without duplicates.

    Returns `order_ids` (ints), `error_codes` (upper case), `services` (service ids; Chinese names map through
    the catalog's aliases), `trace_ids`, `http_statuses`, `metrics` (metric names hinted at), `times`
    ("YYYY-MM-DD HH:MM[:SS]"; dates default to the world day) and `time_window` ("START/END", the named times
    padded by 15 minutes, or None).
    """
    text = query if isinstance(query, str) else ""
    codes = [m.group(1).upper() for m in _ERROR_CODE.finditer(text)]
    codes += [m.group(1).upper() for m in _KNOWN_CODES.finditer(text)]
    traces = [m.group(1).lower() for m in _TRACE_LABELLED.finditer(text)]
    traces += [m.group(1).lower() for m in _HEX_TOKEN.finditer(text)
               if re.search(r"[a-f]", m.group(1)) and re.search(r"\d", m.group(1))]
    moments = _times(text)
    lowered = text.lower()
    return {
        "order_ids": _unique([int(m.group(1)) for m in _ORDER_ID.finditer(text)]),
        "error_codes": _unique(codes),
        "services": _services(text),
        "trace_ids": _unique(traces),
        "http_statuses": _unique([int(m.group(1)) for m in _HTTP_STATUS.finditer(text)]),
        "metrics": _unique([metric for pattern, metric in _METRIC_HINTS if re.search(pattern, lowered)]),
        "times": [f"{moment:%Y-%m-%d %H:%M}" + (f":{moment:%S}" if moment.second else "") for moment in moments],
        "time_window": _time_window(moments),
    }
