"""Phrase lists shared by the composer input builder, the composer output guard and the renderer (zh + en)."""

from __future__ import annotations

import functools
import re

from evigate.rules.text.normalize import fold

SENTENCE_SPLIT = re.compile(r"[。！？!?\n]+|(?<=[.;])\s+|；")

ROOT_CAUSE = re.compile(
    r"根因|根本原因|原因是|原因为|原因在于|是由于|由于|导致|造成|引起|引发|归因|所致|因为"
    r"|root[ -]?cause|caused by|because|due to|the cause|result(?:ed)? (?:of|from)|led to|leads to|triggered by"
    r"|attributable to",
)
HEDGE = re.compile(
    r"可能|或许|也许|疑似|推测|假设|猜测|未证实|尚未|未能|未确认|不能确认|无法|不确定|待确认|需要确认|需确认|有待|缺少|缺乏"
    r"|不足|没有证据|无证据|尚不|还不|不能|仍需|需要进一步"
    r"|\bmay\b|\bmight\b|\bcould\b|possibl|perhaps|\blikely\b|suspect|hypothes|not confirmed|unconfirmed|cannot"
    r"|can't|can ?not|not yet|unknown|unclear|missing|\black|no evidence|insufficient|uncertain|to be confirmed"
    r"|not (?:been )?(?:verified|established|proven)",
)
GAP_OR_NEXT_STEP = re.compile(
    r"缺口|缺少|缺乏|尚未|无法确认|不能确认|待确认|需要补充|补充|建议|下一步|进一步|排查|核实|复核|检查|查询|确认"
    r"|\bgap|missing|\black|not yet|next step|recommend|suggest|verify|check|investigat|collect|confirm|review",
)
EVIDENCE_ACTION = re.compile(
    r"查询|查看|检查|确认|补充|核实|复核|排查|收集|采集|获取|比对|对比|人工"
    r"|check|verify|query|inspect|review|collect|confirm|look|gather|compare|investigat|examine|escalat",
)
SUGGESTION = re.compile(r"建议|下一步|请|不妨|recommend|suggest|next step|please|we should|you should")
HEDGE_WORDS = re.compile(
    r"可能是|可能|或许|也许|疑似|推测|猜测|大概|\bmay be\b|\bmight be\b|\bmay\b|\bmight\b|\bcould\b|possibly|perhaps"
    r"|probably|likely"
)


QUESTION_MARKS = ("?", "？")
INTERROGATIVES = ("为什么", "为何", "什么原因", "是什么", "怎么回事", "怎么办")
"""Words that make a text a question without its question mark (是否/如何 are left out: "网关阈值是否过低" is a
fair hypothesis and "日志未显示是否重试" a fair claim)."""


def question_words(text: str, interrogatives: tuple[str, ...] | list[str] = INTERROGATIVES) -> list[str]:
    """The interrogatives `text` contains."""
    folded = fold(text)
    return [word for word, folded_word in _folded(tuple(interrogatives)) if folded_word and folded_word in folded]


@functools.lru_cache(maxsize=32)
def _folded(words: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((word, fold(word)) for word in words)


QUESTION_OPENINGS = ("why", "how come", "how", "what", "which", "who", "where")
"""English words that make a text a question when it opens with one (issue 18: "Why did order 456 fail" was shown
under "Confirmed information"). Yes/no openings (is, did, can …) are left out, as 是否 is: "Is the pool too small"
is a fair hypothesis."""


EMBEDDED_QUESTION = re.compile(
    r"\b(?:wants? to know|wondering|asks?|asking|asked|tell (?:me|us))\s+(?:why|what|how|which|who|where|whether)\b",
    re.IGNORECASE,
)
"""An English question asked inside a statement: "Leadership wants to know why checkout requests were rejected" (issue
18, measured on train: the Composer wrote that request back as its answer, and it was shown because the request has
no question mark). Chinese carries its interrogatives inside the sentence already ("请确认为何…"). Steps ("check
whether …", "find out why …") are no question: a next step may say them."""


def is_question(
    text: str,
    marks: tuple[str, ...] | list[str] = QUESTION_MARKS,
    interrogatives: tuple[str, ...] | list[str] = INTERROGATIVES,
    openings: tuple[str, ...] | list[str] = QUESTION_OPENINGS,
) -> bool:
    """Whether `text` asks rather than states: it ends with a question mark, carries an interrogative, opens with
    an English question word or asks one inside a statement (``EMBEDDED_QUESTION``)."""
    stripped = text.strip()
    return bool(stripped) and (stripped.endswith(tuple(marks)) or bool(question_words(stripped, interrogatives))
                               or opens_with(stripped, openings) is not None
                               or EMBEDDED_QUESTION.search(stripped) is not None)


def opens_with(text: str, openings: tuple[str, ...] | list[str] = QUESTION_OPENINGS) -> str | None:
    """The question word ``text`` opens with (whole word, any case), or None."""
    folded = fold(text.lstrip(" \"'“‘(（"))
    for word in openings:
        if folded.startswith(word) and not folded[len(word):len(word) + 1].isalnum():
            return word
    return None


def sentences(text: str) -> list[str]:
    """Sentences of a Chinese/English/mixed text (split on 。！？!? newlines, '. ' and '; ')."""
    return [piece.strip() for piece in SENTENCE_SPLIT.split(text or "") if piece and piece.strip()]


CLAUSE_SPLIT = re.compile(r"[，,；;]")


def states_root_cause(sentence: str) -> bool:
    """A sentence with a clause that asserts a cause without hedging it ("根因是…", "caused by …").

    Clause by clause: a hedge in one clause does not cover another. Measured on the 0.5B default: "X 是唯一根因，且 X
    可能导致支付接口超时" passed as hedged because of the second clause's 可能.
    """
    return any(
        ROOT_CAUSE.search(clause) and not HEDGE.search(clause) for clause in CLAUSE_SPLIT.split(fold(sentence))
    )


def is_hedged(sentence: str) -> bool:
    """The sentence marks itself as unconfirmed, possible, or a gap."""
    return bool(HEDGE.search(fold(sentence)))


def is_suggestion(sentence: str) -> bool:
    """The sentence proposes a step ("建议检查网关阈值") rather than asserting a fact."""
    return bool(SUGGESTION.search(fold(sentence)))


def strip_hedges(text: str) -> str:
    """The assertion inside a hypothesis ("连接池压力可能参与了超时" → "连接池压力参与了超时")."""
    return HEDGE_WORDS.sub("", fold(text))
