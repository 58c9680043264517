"""evidence.input_echo — an excerpt that only restates the call (its tool and arguments) shows nothing it found."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import Field

from evigate.rules.contract import excerpt_of, iter_bindings, iter_claims
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import cited_views, format_ids
from evigate.rules.gate.session import InvocationView
from evigate.rules.text.normalize import compact, fold, weight

_QUOTES = " \t'\"“”‘’`「」"
DEFAULT_FORMAT_WORDS = [
    "sections", "section", "matching", "lines", "line", "results", "result", "rows", "row", "points", "hits",
    "showing", "found", "条", "行", "个", "结果", "命中",
]  # fmt: skip


class InputEchoParams(RuleParams):
    min_found_weight: int = Field(
        ge=1, description="content weight an excerpt must keep once the call's own words are removed"
    )
    format_words: list[str] = Field(
        default_factory=lambda: list(DEFAULT_FORMAT_WORDS),
        description="words tool headers put after a count ('3 sections', '9 matching lines'): no finding either",
    )


class InputEcho(Rule):
    """An excerpt that quotes the line in which a tool restates its own call must carry what the call found.

    The demo world's tools open their output by naming themselves and the call (`lookup_knowledge 'ERR_DEADLOCK 死锁
    加锁顺序': 3 sections`, `query_logs order_id=123: 9 matching lines between …`), and a small model quotes that
    line as evidence (measured on the 0.5B default: the claim "死锁 加锁顺序" bound to exactly that header, called a
    direct observation by its Verifier, became a PASS). Such an excerpt matches the output verbatim, so the
    similarity rules pass it. Only excerpts that start with the cited tool's name are looked at: from them the
    tool's name, the argument names and values, and counts in header words (`3 sections`: `formatWords`) are
    removed. What is left is a finding if it holds a number (a time, a value) or weighs at least `minFoundWeight`
    (2 per CJK character, 1 per other character, punctuation ignored). A claim none of whose excerpts is a finding
    only echoes the questions asked: LOW_CONFID-level. One weak binding beside real ones is not held against a
    claim; excerpts quoting what a tool returned (a log line, `14 results` of a count tool, a matched search term)
    are never looked at. On the labelled fixtures (112 demo-world, 97 HolmesGPT-derived cases) it finds nothing.
    """

    id = "evidence.input_echo"
    Params = InputEchoParams

    def validate(self, context: RuleContext, params: InputEchoParams) -> list[RuleFinding]:
        words = "|".join(re.escape(fold(w)) for w in sorted(params.format_words, key=len, reverse=True)) or "(?!)"
        counts = re.compile(rf"\d+\s*(?:{words})|(?:{words})")
        findings: list[RuleFinding] = []
        for claim_index, claim in iter_claims(context.data):
            echoes, checked = [], 0
            for _, binding in iter_bindings(claim):
                excerpt = excerpt_of(binding)
                views = cited_views(context, binding)
                if not excerpt.strip() or not views:
                    continue  # empty excerpts and unknown ids are other rules' business
                checked += 1
                if not any(_finds_something(excerpt, view, counts, params.min_found_weight) for view in views):
                    echoes.append(f"“{excerpt[:60]}” ({format_ids(views)})")
            if checked and len(echoes) == checked:
                findings.append(RuleFinding(
                    f"claims[{claim_index}].evidence_bindings",
                    "every excerpt only restates its call (tool and arguments), not something it returned: "
                    + "; ".join(echoes),
                ))
        return findings


def _finds_something(excerpt: str, view: InvocationView, counts: re.Pattern[str], min_weight: int) -> bool:
    """Whether `excerpt` holds more than the call's own words and header counts (only header quotes are looked at)."""
    text = fold(excerpt).strip(_QUOTES)
    if not text.startswith(fold(view.tool_name)):
        return True
    for part in sorted({fold(part) for part in _call_words(view)} - {""}, key=len, reverse=True):
        text = text.replace(part, " ")
    text = counts.sub(" ", text)
    return bool(re.search(r"\d", text)) or weight(compact(text)) >= min_weight


def _call_words(view: InvocationView) -> Iterator[str]:
    yield view.tool_name
    yield from _leaves(view.invocation.input or {})


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield str(value)
