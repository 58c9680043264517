"""The user's premise written back as a finding: a claim made of the question's own pieces (issue 18).

Measured on dev with the 0.5B default: "2 pm payment timeouts caused by the connection pool filling up" for "Were
the 2 pm payment timeouts caused by the connection pool filling up?" (the user's wrong guess), and "API gateway
throttling orders after 4:30 pm" for "Why did the API gateway start throttling orders after 4:30 pm?", which the
Verifier model then called observed: a NORMAL answer whose only confirmed fact was the question. The question's
words are in the session, so every check that a claim's words occur somewhere passes.

A claim that echoes the question (``echoes``: most of it is the question's pieces; or every content term of it, two
or more, is the question's; or, naming no id, code, service, time or value, half its terms are) stands only when
what it cites observed every id, code, service, time and count it names (``observed_text``: not the call's header,
nor its arguments written back in its details): "订单 123 支付失败，错误码 ERR_TIMEOUT", cited from the order record
that holds both, confirms the user's report; an empty log query for notification-service observes nothing about it. Most
of it the question's pieces, it must also name the record it reports on (an order by its number, a trace id) as what
it cites observed it: a symptom in the user's words is not confirmed by a value it mentions.
Otherwise it is the question restated: code rewrites it into what it cites (``rewrite_junk_claims``), it never
counts as quoting an output (``add_anchor_observations``), and it is never confirmed (``off_topic_claims``). Pure
code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evigate.rules.contract import binding_ids, claim_text, iter_bindings
from evigate.rules.gate.observed import KNOWLEDGE_TOOLS, is_knowledge_tool, observed_text
from evigate.rules.gate.session import SessionIndex, flatten
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.junk import content_terms, echoes, junk_settings, terms_found
from evigate.rules.text.normalize import compact, fold, weight
from evigate.rules.text.records import names_record
from evigate.rules.verdict.confirmation import MIN_CONFIRM_WEIGHT, strip_attribution

PREMISE_WHY = "the claim text restates the user's question, and what it cites does not observe what it names"


def premise_reason(claim: Mapping[str, Any], session: SessionIndex, query: str) -> str | None:
    """``PREMISE_WHY`` when the claim is the question restated (see the module docstring), else None."""
    text = claim_text(claim)
    if not query.strip() or not text.strip():
        return None
    echoed = echoes(text, query)
    named = [entity for entity in extract_entities(text) if entity.is_key_value]
    if not (echoed or _only_question_terms(text, query) or (not named and _mostly_question_terms(text, query))):
        return None
    cited = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))]
    observed = observed_text(cited)
    if named and all(entity_occurs(entity, observed) for entity in named) and (
            not echoed or _names_observed_record(named, text, observed)):
        return None
    return PREMISE_WHY


def _names_observed_record(named: list[Any], text: str, observed: str) -> bool:
    """Whether the claim names a record (a trace id, an order by its number) that what it cites observed as one.

    The user's report of a record is confirmed by that record ("订单 123 支付失败，错误码 ERR_TIMEOUT" from the order
    row). The user's account of a symptom is not confirmed by a value it mentions: measured on train (0.5B default),
    "网关突然开始疯狂 429 了，流量也没做活动啊", the question less its first word, cited to a metric line holding 429,
    was labelled observed and made a NORMAL answer whose only confirmed fact was the question."""
    for entity in named:
        if entity.kind == "identifier" and entity_occurs(entity, observed):
            return True
        number = entity.exact or entity.text
        if entity.kind == "number" and names_record(number, text) and names_record(number, observed):
            return True
    return False


def _only_question_terms(text: str, query: str) -> bool:
    """Whether every content term of ``text`` (two or more) is one of the question's: the user's guess with its verb
    conjugated. Measured on dev: "Redis went down" for "Did Redis go down?", cited to a timeout log line and called
    observed; by characters only 69 % of it is the question's ("went" is not "go"), below ``echoes``'s share."""
    settings = junk_settings()
    terms = content_terms(text, settings)
    # One shared word ("timeout") is a subject an answer may name, not the question again (``minPremiseTerms``).
    return len(terms) >= settings.min_premise_terms and terms <= content_terms(query, settings)


def _mostly_question_terms(text: str, query: str) -> bool:
    """Whether ``unnamedPremiseShare`` or more of the content terms of ``text`` (two or more) are the question's: for
    a claim naming no id, code, service, time or value, the user's words with a word or two added. Measured on train
    (0.5B default): "上游超时次数上游超时" for "…有多少次上游超时？" (half of its terms the question's), labelled
    observed by the Verifier model and shown as confirmed; of the labelled sets' claims naming nothing, the direct
    observations share at most 17 % of their terms with the question ("短信失败不影响订单与支付状态，只影响用户
    通知")."""
    settings = junk_settings()
    terms = content_terms(text, settings)
    shared = terms & content_terms(query, settings)
    return len(terms) >= settings.min_premise_terms and len(shared) >= settings.unnamed_premise_share * len(terms)


UNOBSERVED_WHY = "nothing it names was observed: the calls it cites name it only in what they were asked"


def unobserved_reason(claim: Mapping[str, Any], session: SessionIndex) -> str | None:
    """``UNOBSERVED_WHY`` when the claim names ids, codes or services and no call it cites observed any of them
    (``observed_text``), though they were asked about them; else None.

    Measured on dev (0.5B default): "pay-gateway 调用上游支付通道超时", a runbook's words cited to an empty
    query_logs call for pay-gateway, labelled observed by the Verifier model: the only evidence was the call's own
    header. A claim about what evigate asked, not about what came back, is no finding."""
    named = [entity for entity in extract_entities(claim_text(claim)) if entity.is_key_value]
    cited = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))
             if view.success]
    if not named or not cited:
        return None
    observed = observed_text(cited)
    if any(entity_occurs(entity, observed) for entity in named):
        return None
    asked = "\n".join(f"{view.tool_name} {flatten(view.invocation.input)}" for view in cited if view.invocation.input)
    return UNOBSERVED_WHY if any(entity_occurs(entity, asked) for entity in named) else None


BORROWED_WHY = "its words are a knowledge document's, not what the calls it cites returned"


def borrowed_reason(
    claim: Mapping[str, Any], session: SessionIndex, knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS
) -> str | None:
    """``BORROWED_WHY`` when the claim's whole text (minus an attribution), or each of its content terms, is what a
    knowledge document of this session returned, while no call it cites returned it and none of them is a knowledge
    document; else None.

    Measured on dev (0.5B default): "pay-gateway 调用上游支付通道超时", the runbook's definition of ERR_TIMEOUT, and a
    runbook's section title with its retrieval metadata, each cited to a real log line of query_logs, were labelled
    observed by the Verifier model and made NORMAL answers. A runbook describes; it never observed this incident, and
    a real excerpt beside its words does not make them an observation (the excerpt itself is stated by code)."""
    knowledge = tuple(knowledge_tools)
    cited = [view for _, binding in iter_bindings(claim) for view in session.resolve(binding_ids(binding))]
    if not cited or any(is_knowledge_tool(view.tool_name, knowledge) for view in cited):
        return None
    text = strip_attribution(claim_text(claim), (view.tool_name for view in cited))
    core = compact(fold(text))
    if weight(core) < MIN_CONFIRM_WEIGHT or any(core in part for view in cited for part in view.returned_cores):
        return None
    runbooks = [view for view in session.in_session if view.success and is_knowledge_tool(view.tool_name, knowledge)]
    if any(core in part for view in runbooks for part in view.returned_cores) or (
            runbooks and _terms_only_from(text, runbooks, cited)):
        return BORROWED_WHY
    return None


def _terms_only_from(text: str, runbooks: list[Any], cited: list[Any]) -> bool:
    """Whether what ``text`` adds to what its cited calls returned is a runbook's words: of its content terms, those
    the cited calls did not return are ``borrowedShare`` or more a runbook's (two or more of them, unless the claim
    shares no term with the calls), while no value it names (an id, a count) is in what the calls returned.

    Measured on train (0.5B default): "短信服务商 短信服务商 熔断", a runbook title's words written twice and cited
    to an English log line, was labelled observed by the Verifier model and shown as confirmed; doubled, the text is
    no runbook's verbatim, but each of its words is, and not one is the log line's. A runbook's explanation written
    beside a word the line does hold ("全表扫描" on a slow-query line, "索引失效" from the runbook) is the runbook's
    reading of the line, not an observation of it, in the same way."""
    settings = junk_settings()
    terms = content_terms(text, settings)
    if not terms:
        return False
    observed = observed_text(cited)
    if any(entity.is_key_value and entity_occurs(entity, observed) for entity in extract_entities(text)):
        return False
    added = terms - terms_found(terms, _returned(cited))
    if not added or (added != terms and len(added) < settings.min_premise_terms):
        return False
    return len(terms_found(added, _returned(runbooks))) >= settings.borrowed_share * len(added)


def _returned(views: list[Any]) -> str:
    """What the calls returned: their previews and retrieval details."""
    return "\n".join(part for view in views for part in view.returned)
