"""Every fixed text a user reads, in one catalogue per locale (zh, en): headings, disclaimers, gaps, actions.

The Composer input builder and the renderer take their words from here only, so an ``en`` answer contains no
Chinese of code's own (issue 18: "the gaps were printed in Chinese"). Quoted evidence and the user's own words are
shown as they are. An unknown locale falls back to zh, the seed specs' language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from evigate.rules.verdict.rows import SUMMARY_OF, ReasonCode
from evigate.signatures.composer import Locale

LOCALES: tuple[Locale, ...] = ("zh", "en")

CATALOGUE: dict[str, dict[str, str]] = {
    "zh": {
        # The renderer's headings and fixed sentences (V1 "用户侧输出协议").
        "disclaimer": "以下结论基于当前已获取证据，仍存在部分证据缺口，请谨慎参考。",
        "degraded": "当前无法基于已获取证据生成可靠结论，建议人工介入。",
        "based_on": "根据已获取的证据：",
        "confirmed": "已确认信息：",
        "possible": "可能方向（尚未证实）：",
        "inferred": "由证据推断（未直接观察到）：",
        "gaps": "证据缺口：",
        "current_gaps": "当前缺口：",
        "next_steps": "建议下一步：",
        "none": "（暂无）",
        "unconfirmed_prefix": "待确认：",
        "parse_failure": "本次诊断未能得到可用的结构化证据（执行器输出{status}），因此无法给出已确认的信息。",
        "question": "您的问题：{query}",
        "missing": "缺失",
        "malformed": "格式错误",
        "retry": "重新发起诊断，或补充更具体的问题描述",
        "manual": "人工查看本次会话的工具调用记录",
        "action_reason": "{action}（{reason}）",
        # Gaps and actions code writes into the Composer input (§19.2.1).
        "gap_unsupported": "“{text}”缺少直接证据，尚未确认",
        "gap_indirect": "“{text}”只有间接支持，缺少直接证据",
        "gap_overstated": "“{text}”的说法超出了现有证据，尚未确认",
        "gap_external": "“{text}”涉及证据之外的信息，无法确认",
        "gap_some_unsupported": "部分说法缺少直接证据，尚未确认",
        "gap_contradicted": "部分说法与工具证据相矛盾，已不予采用",
        "gap_excluded": "部分说法引用的证据无法核实，已不予采用",
        "gap_off_topic": "部分工具证据与所问的问题无关，未作为已确认信息",
        "gap_generic": "当前证据尚不足以确认结论",
        "gap_no_output": "本次诊断未得到可用的结构化证据，无法确认任何结论",
        "action_review": "人工复核本次诊断的工具调用记录与证据",
        "action_review_reason": "自动诊断未能形成可靠结论",
        "action_more_evidence": "补充与问题直接相关的工具证据后重新诊断",
        "action_more_evidence_reason": "现有证据不足以确认结论",
        "verdict_PASS": "证据充分",
        "verdict_LOW_CONFID": "低置信",
        "verdict_REJECT": "拒绝输出结论",
        "verdict_differs": "系统按证据规则判定为“{code}”{reason}，与 Verifier 的“{model}”不同。",
        "verdict_reason": "（{summary}）",
    },
    "en": {
        "disclaimer": "The following is based on the evidence gathered so far. Some evidence is still missing; "
                      "please use it with care.",
        "degraded": "A reliable conclusion cannot be drawn from the evidence gathered; human review is recommended.",
        "based_on": "Based on the evidence gathered:",
        "confirmed": "Confirmed information:",
        "possible": "Possible directions (not confirmed):",
        "inferred": "Inferred from the evidence (not directly observed):",
        "gaps": "Evidence gaps:",
        "current_gaps": "Current gaps:",
        "next_steps": "Suggested next steps:",
        "none": "(none)",
        "unconfirmed_prefix": "Not yet confirmed: ",
        "parse_failure": "This diagnosis produced no usable structured evidence (the executor output was {status}), "
                         "so nothing can be reported as confirmed.",
        "question": "Your question: {query}",
        "missing": "missing",
        "malformed": "malformed",
        "retry": "Run the diagnosis again, or describe the problem more specifically",
        "manual": "Review this session's tool invocation records by hand",
        "action_reason": "{action} ({reason})",
        "gap_unsupported": "\"{text}\" has no direct evidence and is not confirmed",
        "gap_indirect": "\"{text}\" is only indirectly supported; direct evidence is missing",
        "gap_overstated": "\"{text}\" says more than the evidence shows and is not confirmed",
        "gap_external": "\"{text}\" relies on information outside the evidence and cannot be confirmed",
        "gap_some_unsupported": "Some statements have no direct evidence and are not confirmed",
        "gap_contradicted": "Some statements contradict the tool evidence and were discarded",
        "gap_excluded": "Some statements cite evidence that cannot be verified and were discarded",
        "gap_off_topic": "Some tool evidence is unrelated to the question and is not reported as confirmed",
        "gap_generic": "The current evidence is not enough to confirm a conclusion",
        "gap_no_output": "This diagnosis produced no usable structured evidence; nothing can be confirmed",
        "action_review": "Review this diagnosis's tool invocation records and evidence by hand",
        "action_review_reason": "The automatic diagnosis reached no reliable conclusion",
        "action_more_evidence": "Gather tool evidence directly related to the question and run the diagnosis again",
        "action_more_evidence_reason": "The current evidence is not enough to confirm a conclusion",
        "verdict_PASS": "sufficient evidence",
        "verdict_LOW_CONFID": "low confidence",
        "verdict_REJECT": "no conclusion",
        "verdict_differs": "The evidence rules decided \"{code}\"{reason}, unlike the Verifier's \"{model}\".",
        "verdict_reason": " ({summary})",
    },
}

SUMMARY_EN: dict[ReasonCode, str] = {
    "parse_failed": "the executor output could not be parsed; there is no structured evidence to check",
    "contradicted_critical": "a key statement contradicts the tool evidence",
    "external_root_cause": "a root cause comes from outside the evidence",
    "external_entity": "a key entity comes from outside the evidence",
    "forged_evidence": "some statements cite evidence that cannot be verified",
    "gate_failed": "the structured output failed a deterministic check",
    "external_unknown": "some statements rely on information outside the evidence",
    "overstated": "some statements say more than the evidence shows",
    "unsupported": "some statements lack supporting evidence",
    "contradicted": "some statements contradict the tool evidence",
    "no_claims": "there is no statement to confirm",
    "no_direct_critical": "key statements lack direct evidence",
    "off_topic": "no directly observed key statement is about the question",
    "pass": "every key statement has direct evidence",
}
"""The deciding matrix row in English (``SUMMARY_OF`` holds the zh words, which the audit keeps)."""


BULLET = "• "
"""How the template lists items (confirmed facts, gaps, steps)."""
FIXED_TEXTS: frozenset[str] = frozenset(
    text.strip() for catalogue in CATALOGUE.values() for text in catalogue.values() if "{" not in text)
"""Every fixed text of the catalogue, in every locale (headings, disclaimers, fixed gaps and actions): the product's
own words, never a model's junk or filler."""


_PREFIXES = tuple(catalogue["unconfirmed_prefix"].strip() for catalogue in CATALOGUE.values())


def line_body(line: str) -> str:
    """A shown line without the template's marks: its bullet and the "待确认：" / "Not yet confirmed: " prefix."""
    body = line.strip().removeprefix(BULLET.strip()).strip()
    for prefix in _PREFIXES:
        body = body.removeprefix(prefix).strip()
    return body


def words(locale: str) -> dict[str, str]:
    """The catalogue of ``locale`` (zh when unknown)."""
    return CATALOGUE.get(locale, CATALOGUE["zh"])


def summary(code: ReasonCode | str | None, fallback: str, locale: str) -> str:
    """The deciding row's words in ``locale``; ``fallback`` (the decision's zh summary) when the code is unknown."""
    table: Mapping[ReasonCode, str] = SUMMARY_EN if locale == "en" else SUMMARY_OF
    return table.get(cast(ReasonCode, code), fallback) if code else fallback
