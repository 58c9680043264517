"""action.junk_text — a hypothesis, gap or action the user would read says something this session looked at."""

from __future__ import annotations

import re

from pydantic import Field

from evigate.rules.contract import BASIS, HYPOTHESIS_TEXT, MISSING_INFO, text_of
from evigate.rules.gate.actions import iter_user_texts
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.session import SessionIndex, flatten
from evigate.rules.text.entities import extract_entities
from evigate.rules.text.junk import JunkSettings, content_terms, junk_reason, junk_settings, names_evidence
from evigate.rules.text.normalize import compact, fold, weight
from evigate.rules.text.phrases import GAP_OR_NEXT_STEP, ROOT_CAUSE
from evigate.rules.thresholds import THRESHOLDS


class JunkTextParams(RuleParams):
    """Values come from rules/metadata/action.junk_text.yaml; thresholds from rules/text/junk.yaml."""

    fields: list[str] = Field(min_length=1)
    checked_keys: list[str] = Field(
        min_length=1, description="the keys of an item that must say something; others (a reason) are only shown")
    require_basis: bool = Field(description="a hypothesis needs a basis that names evidence of this session")


class JunkText(Rule):
    """Hypotheses, gaps and actions reach the answer as written, so they pass the junk checks of
    ``evigate.rules.text.junk`` (issue 18): no unit written three times in a row ("订单 456 456 456"), no phrase
    written over and over ("补足证据是补足证据的必要步骤"), not the question restated, and not content-free — each
    names an entity, or a content term that occurs in this session's evidence, inputs or question ("立即联系客服"
    names nothing). A hypothesis also needs a `basis` naming an entity a tool returned, or a few terms a tool
    returned that the question does not already say, or must itself name an entity a tool returned; otherwise it
    is a guess ("用户收不到通知短信可能是由于网络问题或服务中断导致的"). A gap says what is missing, so values with no
    word ("2026-11-28 19:50/2026-11-28 20:20", "pay-gateway=74") are none, nor is a cause stated with no word of what
    is missing ("DDoS 了，因为网络流量被限制了"), nor a timestamped record or a measured value a tool returned,
    copied. An item that fails is dropped from the composer input and the answer, and the finding is the audit's
    record of why. The verdict is not affected (`warn_only`): the claims decide it.
    """

    id = "action.junk_text"
    Params = JunkTextParams

    def validate(self, context: RuleContext, params: JunkTextParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        settings = junk_settings()
        session = context.session
        everything: str | None = None
        flagged: set[str] = set()
        for target, text, item in iter_user_texts(context.data, params.fields):
            key = target.rsplit(".", 1)[-1] if "." in target else ""
            item_path = target.split(".", 1)[0]
            if item_path in flagged or (key and key not in params.checked_keys):
                continue
            if everything is None:  # built once, only when there is something to check
                everything = _session_text(session)
            why = junk_reason(text, session.query, everything, settings) or _restates_call(text, session, settings)
            if why is None and item_path.startswith(MISSING_INFO):
                why = _values_only(text) or _states_a_cause(text) or _copies_a_record(text, session)
            if why is None and key == HYPOTHESIS_TEXT and params.require_basis and item is not None:
                basis, returned = text_of(item, BASIS), _returned_text(session)
                # An entity a tool returned, named in the hypothesis itself, grounds it as well as its basis would.
                if not (names_evidence(basis, returned, session.query, settings)
                        or names_evidence(text, returned, session.query, settings.entities_only())):
                    why = "an ungrounded guess: its basis names no evidence this session's tools returned"
            if why is not None:
                flagged.add(item_path)
                findings.append(RuleFinding(target, f"{why}: '{text[:120]}'"))
        return findings


def _restates_call(text: str, session: SessionIndex, settings: JunkSettings) -> str | None:
    """Why ``text`` is only a call of this session written out, or None.

    Measured on dev (0.5B default): the gap "lookup_knowledge((query): 'ERR_TIMEOUT 支付网关超时', top_k: 3)" for a
    day with no records: every content term of it is the call's tool name or arguments. Measured on train: the next
    step "缓存雪崩 TTL 随机化 命中率", the planner's runbook query copied without its tool's name. Each names what
    evigate asked, not what is missing or what to do. Words of a call's own around its values ("no logs for
    pay-gateway") may say just that, so without the tool's name only a copy of an argument's value counts."""
    terms = content_terms(text, settings)
    if not terms:
        return None
    folded = fold(text).lstrip(" '\"“”‘’`「」(（")
    core = compact(folded)
    for view in session.in_session:
        arguments = view.invocation.input or {}
        if folded.startswith(fold(view.tool_name)):
            asked = fold(f"{view.tool_name} {flatten(arguments)}")
            copied = all(term in asked for term in terms)
        else:
            copied = any(isinstance(value, str) and core in compact(fold(value)) for value in arguments.values())
        if copied:
            return f"restates the call {view.tool_name} made, not what is missing or what to do"
    return None


def _copies_a_record(text: str, session: SessionIndex) -> str | None:
    """Why the gap ``text`` is a record a tool of this session returned, copied, or None.

    Measured on train (0.5B default): the gaps "2026-11-28 08:00..08:01 qps avg=599.05 max=613" (a metric line),
    "2026-11-28 11:00 deadlock_count=7", "2026-11-28 20:00..20:01" (a bucket's label) and "2026-11-28 02:10:01 WARN
    mysql-order trace=5d0c2a9e71f3b846" (a log line's head) were shown as gaps. A timestamp or a measured value a tool
    returned is an observation, not what is missing; a copied line without one ("mysql-order has no metric
    cache_hit_rate") may well say what is missing, and stays."""
    core = compact(fold(text))
    if weight(core) < THRESHOLDS.confirmation.min_confirm_weight:
        return None
    if not (_MEASURED.search(text) or any(entity.kind == "time" or (entity.kind == "number" and entity.is_key_value)
                                          for entity in extract_entities(text))):
        return None
    for view in session.in_session:
        if view.success and any(core in part for part in view.returned_cores):
            return f"not a gap: a record {view.tool_name} returned, copied"
    return None


def _values_only(text: str) -> str | None:
    """Why the gap ``text`` names values and no word, or None.

    Measured on train (0.5B default): "2026-11-28 19:50/2026-11-28 20:20" (a call's window) and "pay-gateway=74" (a
    count) were shown as gaps. A gap says what is missing ("no logs for pay-gateway", "缺少 pay-gateway 日志"); a
    time, a count or a name alone says nothing of the kind."""
    entities = extract_entities(text)
    if not entities:
        return None
    rest = text
    for entity in sorted(entities, key=lambda entity: -len(entity.text)):
        rest = rest.replace(entity.text, " ")
    return None if _WORD.search(rest) else "not a gap: it names values only, not what is missing"


def _states_a_cause(text: str) -> str | None:
    """Why ``text`` is a cause stated, not a gap, or None.

    Measured on train (0.5B default): "DDoS 了，因为网络流量被限制了。" and "The order failed due to a SMS provider
    error." were shown under the current gaps, guesses the evidence never made. A gap names what is missing or what
    to check ("缺少…", "尚未确认…", "no logs for …"); causal wording with none of that asserts a cause instead."""
    folded = fold(text)
    if ROOT_CAUSE.search(folded) and not GAP_OR_NEXT_STEP.search(folded):
        return "not a gap: it states a cause instead of the evidence that is missing"
    return None


_WORD = re.compile(r"[^\W\d_]")
"""A letter of any script (a CJK character counts): what a gap's words are made of."""
_MEASURED = re.compile(r"[\w.]=\s*-?\d")
"""A name given a number ("deadlock_count=7", "avg=599.05"): a measured value, whatever the name's shape."""


def _returned_text(session: SessionIndex) -> str:
    """What this session's successful invocations returned (never their inputs or the question)."""
    return "\n".join(part for view in session.in_session if view.success for part in view.returned)


def _session_text(session: SessionIndex) -> str:
    """Everything of this session a user text may name: outputs, inputs, errors, trace summaries, the question."""
    parts = [view.raw_preview for view in session.in_session]
    parts += [part for view in session.in_session for part in view.raw_extras]
    parts += [f"{entry.input_summary}\n{entry.output_summary}" for entry in session.trace]
    parts.append(session.query)
    return "\n".join(part for part in parts if part)
