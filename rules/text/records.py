"""Which number in a line is a record's id: "order 123" names order 123, "pool_pending=123" does not.

Shared by the rules that ask whether a text is about the user's record (anchor observations, relevance, premise),
whether a claim counts what is only an id (counts), and by the question-bank metrics. Pure code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

NUMBER_WORDS = ("order", "ticket", "number", "订单", "单号", "工单")
"""Words that label a record's number ("order 123", "订单 123")."""
RECORD_WORDS = (*NUMBER_WORDS, "trace", "id")
"""Words that label a record ("order 123", "trace 7f3a…", "id 42"): with its number or id, the question names that
record, and the word itself says nothing more."""
_WORDS = [re.escape(word) for word in NUMBER_WORDS if word.isascii()]
_CJK_WORDS = [re.escape(word) for word in NUMBER_WORDS if not word.isascii()]
ID_CONTEXT = rf"(?:(?<![a-z])(?:{'|'.join(_WORDS)}|no\.?)|{'|'.join(_CJK_WORDS)}|id|#)[\s=:：#_-]{{0,3}}"
"""What may stand before a number for it to be a record's id ("order 123", "order_id=123", "订单 123", "#123"); "id"
also inside a field name ("order_id")."""
_ID_BEFORE = re.compile(ID_CONTEXT + "$", re.IGNORECASE)


def names_record(number: str, line: str) -> bool:
    """Whether ``line`` names the record numbered ``number`` (not a value equal to it: pool_pending=123)."""
    return _labelled(number, line, _ID_BEFORE)


def only_record_id(number: str, texts: Iterable[str]) -> bool:
    """Whether ``number`` stands in ``texts`` at least once, and everywhere as a record's id ("order=88412"), never as
    a value of its own: a claim giving it as a count misreads the evidence (``rules/text/counts.py``)."""
    whole = labelled = 0
    for text in texts:
        for start in _whole_occurrences(number, text):
            whole += 1
            labelled += bool(_ID_BEFORE.search(text[max(0, start - 16):start]))
    return whole > 0 and labelled == whole


def _labelled(number: str, line: str, label: re.Pattern[str]) -> bool:
    """Whether ``number`` stands in ``line`` as a whole number right after what ``label`` matches."""
    return any(label.search(line[max(0, start - 16):start]) for start in _whole_occurrences(number, line))


def _whole_occurrences(number: str, line: str) -> Iterator[int]:
    """Where ``number`` stands in ``line`` as a whole number (no digit either side), lazily."""
    start = line.find(number)  # plain search first: this runs over every returned line of the session
    while start >= 0:
        end = start + len(number)
        if (not start or not line[start - 1].isdigit()) and (end >= len(line) or not line[end].isdigit()):
            yield start
        start = line.find(number, start + 1)


_STATUS_BEFORE = re.compile(r"(?:(?<![a-z])(?:http|https|status|status_code|code)|状态码|返回码)[\s=:：_/-]{0,3}$",
                            re.IGNORECASE)


def names_status(number: str, line: str) -> bool:
    """Whether ``line`` names ``number`` as an HTTP status ("HTTP 429 Too Many Requests", "status=503",
    "http_429_count"), not a value equal to it (rejected=429).

    Asked "四点半的 429 是不是因为重试？", the user names a status, not a record: measured on train (0.5B default), the
    api-gateway tally of ERR_RATE_LIMITED was dropped as not about the question, though every line of it said
    "HTTP 429"."""
    if not (len(number) == 3 and number.isdigit() and number[0] in "45"):  # the error statuses, 4xx and 5xx
        return False
    return _labelled(number, line, _STATUS_BEFORE)
