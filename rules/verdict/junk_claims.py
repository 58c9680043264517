"""rewrite_junk_claims: a junk claim text beside a verbatim excerpt becomes the tool's own observation.

A small Executor often writes the user's question, or an instruction copied from its prompt, as ``claim_text``
while its binding quotes the cited output correctly (measured on the 0.5B default: "订单 123 支付失败，ERR_TIMEOUT
是什么原因？" bound to "order 123: status=FAILED error_code=ERR_TIMEOUT …"). The excerpt is a directly observed fact
of its tool; the claim text is not. Code replaces such a claim by "<tool> 返回：<excerpt>" (en: "<tool> returned:
<excerpt>") before the Gatekeeper runs, so every rule judges the new text. It never makes a hypothesis or a root
cause a fact: hypotheses are never touched, an excerpt with causal or hedged wording is never used, and the new
claim is a ``symptom`` (``context`` when it quotes a knowledge document), never a ``root_cause``. Pure code.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules.gate.session import SessionIndex, binding_ids, claim_key, iter_bindings, iter_claims, text_of
from evigate.rules.text.normalize import compact, fold, squash_whitespace, weight
from evigate.rules.text.phrases import HEDGE, ROOT_CAUSE, is_question
from evigate.rules.verdict.confirmation import KNOWLEDGE_TOOLS, MIN_CONFIRM_WEIGHT, is_knowledge_tool, restates_header

REWRITE_TEMPLATE = {"zh": "{tool} 返回：{excerpt}", "en": "{tool} returned: {excerpt}"}
MAX_EXCERPT_CHARS = 300
_INSTRUCTION = re.compile(
    r"^(?:请|必须|务必|不要|禁止|只能|仅|输出|列出|给出|使用|按照|根据以上|根据上述|根据工具|你是|你需要|作为)"
    r"|claim_text|evidence_excerpt|support_level|source_invocation_ids|evidence_bindings|claim_type|answer_version"
    r"|executor_evidence_v2|\bjson\b"
    r"|^(?:please|you must|you are|do not|don't|only|output|list|return|use|write|fill|based on the)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ClaimRewrite:
    """One claim code rewrote: what the Executor wrote, what code made of it, and why (kept in the audit)."""

    claim_id: str
    original_text: str
    new_text: str
    why: str


def junk_reason(text: str, query: str = "", instructions: Sequence[str] = ()) -> str | None:
    """Why a claim text states no finding (a question, the query again, a copied instruction), or None."""
    stripped = text.strip()
    if not stripped:
        return "empty claim text"
    if is_question(stripped):
        return "the claim text is a question"
    if query.strip() and compact(fold(stripped)) == compact(fold(query)):
        return "the claim text is the user's question"  # restating the facts the user reported is fine
    if _INSTRUCTION.search(fold(stripped)):
        return "the claim text is an instruction, not a finding"
    core = compact(fold(stripped))
    if weight(core) >= 8 and any(core in compact(fold(prompt)) for prompt in instructions if prompt):
        return "the claim text is copied from the prompt"
    return None


def _usable_excerpt(excerpt: str) -> bool:
    folded = fold(excerpt)
    return (weight(compact(folded)) >= MIN_CONFIRM_WEIGHT and not is_question(excerpt)
            and not ROOT_CAUSE.search(folded) and not HEDGE.search(folded))


def rewrite_junk_claims(
    data: Mapping[str, Any] | None,
    session: SessionIndex,
    *,
    query: str = "",
    instructions: Sequence[str] = (),
    locale: str = "zh",
    knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS,
) -> tuple[dict[str, Any] | None, list[ClaimRewrite]]:
    """A copy of ``data`` whose junk claims with a verbatim excerpt are rewritten; the rewrites made.

    The excerpt must occur (ignoring case, spaces and punctuation) in what a cited, successful invocation of this
    session with the binding's tool name returned. ``data`` itself is never modified.
    """
    if not isinstance(data, Mapping):
        return (dict(data) if isinstance(data, dict) else None), []
    template = REWRITE_TEMPLATE.get(locale, REWRITE_TEMPLATE["zh"])
    knowledge = tuple(knowledge_tools)
    result = copy.deepcopy(dict(data))
    rewrites: list[ClaimRewrite] = []
    for index, claim in iter_claims(result):
        text = text_of(claim, "claim_text")
        why = junk_reason(text, query, instructions)
        if why is None:
            continue
        for _, binding in iter_bindings(claim):
            excerpt = squash_whitespace(text_of(binding, "evidence_excerpt"))[:MAX_EXCERPT_CHARS]
            tool = text_of(binding, "tool_name")
            if not _usable_excerpt(excerpt):
                continue
            views = [view for view in session.resolve(binding_ids(binding)) if view.success and view.tool_name == tool]
            if restates_header(excerpt, views):
                continue  # the tool describing its own call is no observation of the incident
            needle = compact(fold(excerpt))
            if not any(needle in compact(fold(part)) for view in views for part in (view.raw_preview,
                                                                                    view.raw_details) if part):
                continue
            new_text = template.format(tool=tool, excerpt=excerpt.strip())
            claim.update(
                claim_text=new_text, support_level="direct", evidence_bindings=[binding],
                claim_type="context" if is_knowledge_tool(tool, knowledge) else (
                    "symptom" if claim.get("claim_type") in (None, "root_cause", "remediation")
                    else claim.get("claim_type")),
            )
            rewrites.append(ClaimRewrite(claim_key(claim, index), text, new_text, why))
            break
    return result, rewrites
