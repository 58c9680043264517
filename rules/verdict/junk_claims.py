"""rewrite_junk_claims: a junk claim text beside a verbatim excerpt becomes the tool's own observation.

A small Executor often writes the user's question, or an instruction copied from its prompt, as ``claim_text``
while its binding quotes the cited output correctly (measured on the 0.5B default: "订单 123 支付失败，ERR_TIMEOUT
是什么原因？" bound to "order 123: status=FAILED error_code=ERR_TIMEOUT …"). The excerpt is a directly observed fact
of its tool; the claim text is not. Code replaces such a claim by "<tool> 返回：<excerpt>" (en: "<tool> returned:
<excerpt>") before the Gatekeeper runs, so every rule judges the new text. It never makes a hypothesis or a root
cause a fact: hypotheses are never touched, an excerpt with causal or hedged wording is never used, and the new
claim is a ``symptom`` (``context`` when it quotes a knowledge document), never a ``root_cause``. Pure code.

``add_excerpt_observations`` applies the same idea to a claim that is no junk but that code cannot confirm (a
paraphrase, a causal or indirect claim): the returned line its excerpt quotes is added, beside it, as the tool's
own observation; the Executor's claim stays as written and is judged as before (docs/confirmation.md §4b).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules.contract import (
    ANSWER_VERSION_KEY,
    BINDINGS,
    CLAIM_TEXT,
    CLAIM_TYPE,
    CLAIMS,
    EXCERPT,
    INVOCATION_IDS,
    SUPPORT_LEVEL,
    binding_ids,
    claim_key,
    claim_text,
    claim_type,
    excerpt_of,
    iter_bindings,
    iter_claims,
    observation_claim,
    tool_of,
)
from evigate.rules.gate.session import SessionIndex
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import compact, fold, squash_whitespace, weight
from evigate.rules.text.phrases import HEDGE, ROOT_CAUSE, is_question
from evigate.rules.thresholds import THRESHOLDS
from evigate.rules.verdict.ceilings import ceilings_of
from evigate.rules.verdict.confirmation import (
    KNOWLEDGE_TOOLS,
    MIN_CONFIRM_WEIGHT,
    is_knowledge_tool,
    restates_header,
)
from evigate.rules.verdict.premise import borrowed_reason, premise_reason
from evigate.signatures import ANSWER_VERSION

MAX_EXCERPT_CHARS = THRESHOLDS.junk_claims.max_excerpt_chars
MIN_COPIED_WEIGHT = THRESHOLDS.junk_claims.min_copied_weight
MIN_KEPT_SHARE = THRESHOLDS.junk_claims.min_kept_share
MAX_SUBJECT_CHARS = THRESHOLDS.junk_claims.max_subject_chars
REWRITE_TEMPLATE = {"zh": "{tool} 返回：{excerpt}", "en": "{tool} returned: {excerpt}"}
CALLED_TEMPLATE = {"zh": "{tool}（{subject}）返回：{excerpt}", "en": "{tool} ({subject}) returned: {excerpt}"}


def observation_text(tool: str, excerpt: str, views: Sequence[Any], locale: str = "zh",
                     knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS) -> str:
    """"<tool> 返回：<excerpt>", naming what the call was about when the excerpt does not say it.

    A metric line ("threshold > 45: first breach … (pool_active=50)") means little without the service it is about:
    the call's text arguments (and ``*_id`` arguments) that the returned text itself shows, and the excerpt does not,
    are named in brackets ("query_metrics（payment-service pool_active）返回：…"). Never for a knowledge tool: its
    argument is what was asked, not what was found.
    """
    needle = compact(fold(excerpt))
    subject: list[str] = []
    for view in views:
        returned = compact(fold(" ".join(view.returned)))
        if not needle or needle not in returned:
            continue
        if not is_knowledge_tool(tool, knowledge_tools):
            for key, value in (view.invocation.input or {}).items():
                if isinstance(value, bool) or not (isinstance(value, str) or str(key).endswith("id")):
                    continue
                shown = compact(fold(str(value)))
                if (shown and shown in returned and shown not in needle
                        and len(str(value)) <= MAX_SUBJECT_CHARS):
                    subject.append(" ".join(str(value).split()))
        break
    if subject and not any(ROOT_CAUSE.search(fold(item)) or HEDGE.search(fold(item)) for item in subject):
        return CALLED_TEMPLATE.get(locale, CALLED_TEMPLATE["zh"]).format(tool=tool, subject=" ".join(subject),
                                                                         excerpt=excerpt)
    return REWRITE_TEMPLATE.get(locale, REWRITE_TEMPLATE["zh"]).format(tool=tool, excerpt=excerpt)
INSTRUCTION = re.compile(
    r"^(?:请|必须|务必|不要|禁止|只能|仅|输出|列出|给出|使用|按照|根据以上|根据上述|根据工具|你是|你需要|作为)"
    + "".join(f"|{re.escape(name)}" for name in (CLAIM_TEXT, EXCERPT, SUPPORT_LEVEL, INVOCATION_IDS, BINDINGS,
                                                  CLAIM_TYPE, ANSWER_VERSION_KEY, ANSWER_VERSION))
    + r"|\bjson\b"
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
    if INSTRUCTION.search(fold(stripped)):
        return "the claim text is an instruction, not a finding"
    core = compact(fold(stripped))
    if weight(core) >= MIN_COPIED_WEIGHT and any(core in compact(fold(prompt)) for prompt in instructions if prompt):
        return "the claim text is copied from the prompt"
    return None


def verbatim_start(excerpt: str, views: Sequence[Any]) -> str | None:
    """``excerpt`` when a view returned it (ignoring case, spaces, punctuation); else its longest start of whole words
    that one returned line holds, ending at a word boundary there, when that start keeps at least half the excerpt's
    weight; else None.

    Measured on the 0.5B default: a breach line copied verbatim up to its last words, which came out translated
    ("… 26 of 1440分钟 in"). What it copied verbatim is still what the tool returned; the rest is dropped, never kept.
    """
    needle = compact(fold(excerpt))
    parts = [part for view in views for part in view.returned]
    if not needle:
        return None
    lines = [(squash_whitespace(fold(line)), line) for part in parts for line in part.splitlines()]
    if any(needle in compact(fold(part)) for part in parts) and not _cuts_a_value(excerpt, needle, lines):
        return excerpt
    if not usable_excerpt(excerpt):
        return None  # a cause, hedge or question in the part that does not match: the Gatekeeper's business
    words = excerpt.split()
    for count in range(len(words) - 1, 0, -1):
        start = " ".join(words[:count]).rstrip(",，;；:：")
        if weight(compact(fold(start))) < MIN_KEPT_SHARE * weight(needle):
            return None
        wanted = squash_whitespace(fold(start))
        rest = " ".join(words[count:])
        dropped = extract_entities(rest)
        for folded, line in lines:
            at = folded.find(wanted)
            end = at + len(wanted)
            if at < 0 or (end < len(folded) and folded[end].isalnum()) or (at > 0 and folded[at - 1].isalnum()):
                continue
            if folded[end:].lstrip(" ,，;；:：").startswith(squash_whitespace(fold(rest)).lstrip(" ,，;；:：")):
                return start  # the rest was copied verbatim too, only cut short ("14 of 144" of "14 of 1440")
            # A dropped value the line does not hold is a changed fact, not a slip: nothing is kept then.
            return start if all(entity_occurs(entity, line) for entity in dropped) else None
    return None


def _cuts_a_value(excerpt: str, needle: str, lines: Sequence[tuple[str, str]]) -> bool:
    """Whether ``excerpt`` stops (or starts) inside a word or number of every returned line holding it: "… 14 of 144"
    copied from "… 14 of 1440 minutes in breach" names 144, a value no tool returned. Measured on train (when-zh-07,
    0.5B default): code stated that cut as the tool's observation, the entity rules failed it as forged evidence,
    and the answer was REJECT. A match found only apart from spaces and punctuation counts as cut where a digit
    follows (or precedes) the excerpt's own digit there."""
    cut = _every_match_cut([folded for folded, _ in lines], squash_whitespace(fold(excerpt)), str.isalnum)
    if cut is not None:
        return cut
    return bool(_every_match_cut([compact(folded) for folded, _ in lines], needle, str.isdigit))


def _every_match_cut(texts: Sequence[str], wanted: str, inside: Callable[[str], bool]) -> bool | None:
    """Whether every occurrence of ``wanted`` in ``texts`` starts or ends within a run of ``inside`` characters;
    None when it occurs nowhere."""
    found = False
    for text in texts:
        at = text.find(wanted)
        while at >= 0:
            found = True
            end = at + len(wanted)
            if not ((end < len(text) and inside(text[end]) and inside(text[end - 1]))
                    or (at > 0 and inside(text[at - 1]) and inside(text[at]))):
                return False
            at = text.find(wanted, at + 1)
    return True if found else None


def usable_excerpt(excerpt: str) -> bool:
    """Whether an excerpt may stand as an observation: weighty enough, no question, no cause, no hedge."""
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
    knowledge = tuple(knowledge_tools)
    result = copy.deepcopy(dict(data))
    rewrites: list[ClaimRewrite] = []
    for index, claim in iter_claims(result):
        text = claim_text(claim)
        why = (junk_reason(text, query, instructions) or premise_reason(claim, session, query)
               or borrowed_reason(claim, session, knowledge))
        if why is None:
            continue
        for _, binding in iter_bindings(claim):
            tool = tool_of(binding)
            views = [view for view in session.resolve(binding_ids(binding)) if view.success and view.tool_name == tool]
            excerpt = verbatim_start(squash_whitespace(excerpt_of(binding))[:MAX_EXCERPT_CHARS],
                                     views)
            if excerpt is None or not usable_excerpt(excerpt):
                continue
            if restates_header(excerpt, views):
                continue  # the tool describing its own call is no observation of the incident
            new_text = observation_text(tool, excerpt.strip(), views, locale, knowledge)
            claim.update({
                CLAIM_TEXT: new_text, SUPPORT_LEVEL: "direct", BINDINGS: [{**binding, EXCERPT: excerpt.strip()}],
                # A junk text's type is as meaningless as its text: an incident tool's record is a symptom.
                CLAIM_TYPE: "context" if is_knowledge_tool(tool, knowledge) else (
                    claim_type(claim) if claim_type(claim) in ("impact", "risk") else "symptom"),
            })
            rewrites.append(ClaimRewrite(claim_key(claim, index), text, new_text, why))
            break
    return result, rewrites


OBSERVED_WHY = "added by code: the cited excerpt is a line {tool} returned, a direct observation of its own"
OBSERVED_SUFFIX = "-observed"


def _returned_line(excerpt: str, views: Sequence[Any]) -> tuple[Any, str] | None:
    """(invocation, the one returned line holding ``excerpt``); None when no line, or more than one, holds it."""
    needle = compact(fold(excerpt))
    found: dict[str, tuple[Any, str]] = {}
    for view in views if needle else ():
        for part in view.returned:
            for line in part.splitlines():
                if needle in compact(fold(line)):
                    found.setdefault(compact(fold(line)), (view, cut_line(line.strip())))
    return next(iter(found.values())) if len(found) == 1 else None  # two lines: which one it quotes is unknown


def cut_line(line: str) -> str:
    """``line`` within MAX_EXCERPT_CHARS, cut at a space so no value is left half-written."""
    if len(line) <= MAX_EXCERPT_CHARS:
        return line
    head = line[:MAX_EXCERPT_CHARS]
    return head[: head.rfind(" ")] if " " in head else head


def never_observed(claim: Mapping[str, Any], key: str, ceilings: Mapping[str, Any]) -> bool:
    """Whether a claim can never be a direct observation itself: capped (``ceilings_of``: indirect, causal,
    knowledge-only) or hedged. Its quote is then stated by code (here, and ``add_anchor_observations``)."""
    return key in ceilings or bool(HEDGE.search(fold(claim_text(claim))))


def add_excerpt_observations(
    data: Mapping[str, Any] | None,
    session: SessionIndex,
    *,
    query: str = "",
    locale: str = "zh",
    knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS,
) -> tuple[dict[str, Any] | None, list[ClaimRewrite]]:
    """A copy of ``data`` with "<tool> 返回：<line>" added for each claim that can never be a direct observation
    itself (capped: indirect, causal, knowledge-only; or hedged) whose excerpt is a verbatim, usable part of one line
    a cited, successful invocation returned; the additions made. (A plain paraphrase is left to the Verifier, so an
    answer does not state every finding twice.)

    The Executor's claim is kept unchanged (its own labels and caps decide it); the added claim states only the
    returned line that holds the excerpt: a symptom (``context`` for a knowledge document), never a root cause, with
    one binding to that invocation. Never from a hypothesis (only ``claims`` are read), a header line, the call's
    own arguments, or a line with causal, hedged or question wording; never a line another claim already states.
    """
    if not isinstance(data, Mapping):
        return (dict(data) if isinstance(data, dict) else None), []
    knowledge = tuple(knowledge_tools)
    result = copy.deepcopy(dict(data))
    ceilings = ceilings_of(result, knowledge, session)
    said = [compact(fold(claim_text(claim))) for _, claim in iter_claims(result)]
    added: list[dict[str, Any]] = []
    rewrites: list[ClaimRewrite] = []
    for index, claim in iter_claims(result):
        key = claim_key(claim, index)
        text = claim_text(claim)
        if junk_reason(text, query) is not None or not never_observed(claim, key, ceilings):
            continue  # a junk text is rewritten instead; any other claim may still be observed as written
        for _, binding in iter_bindings(claim):
            tool = tool_of(binding)
            views = [view for view in session.resolve(binding_ids(binding)) if view.success and view.tool_name == tool]
            excerpt = squash_whitespace(excerpt_of(binding))
            found = _returned_line(excerpt, views) if weight(compact(fold(excerpt))) >= MIN_CONFIRM_WEIGHT else None
            if found is None or not usable_excerpt(found[1]) or restates_header(found[1], [found[0]]):
                continue
            view, line = found
            core = compact(fold(line))
            if any(core in other for other in said):
                continue
            said.append(core)
            new_text = observation_text(tool, line, [view], locale, knowledge)
            kind = "context" if is_knowledge_tool(tool, knowledge) else "symptom"
            added.append(observation_claim(f"{key}{OBSERVED_SUFFIX}", kind, new_text,
                                           {**binding, INVOCATION_IDS: [view.id], EXCERPT: line}))
            rewrites.append(ClaimRewrite(f"{key}{OBSERVED_SUFFIX}", text, new_text, OBSERVED_WHY.format(tool=tool)))
            break
    if added:  # appended: no claim's key moves (an output without a claims list adds nothing)
        result[CLAIMS] = [*result[CLAIMS], *added]
    return result, rewrites
