"""An answer and its context as one synthetic diagnosis session, so the Gatekeeper and the verdict matrix judge it.

Each passage becomes one successful invocation of a tool named ``context``; each sentence that states something
becomes one claim bound to the passages that cover it, its excerpt the best-matching span (verbatim, so the excerpt
rules see real evidence and the entity rules compare the claim with the passages it cites).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules.contract import ANSWER_VERSION_KEY, CLAIM_ID, CLAIMS
from evigate.rules.grounding.binding import Binding, Passage, bind, content_tokens, make_passages
from evigate.rules.grounding.sentences import MAX_ANSWER_CHARS, Sentence, split_sentences
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import INVISIBLE, first_visible, fold, is_cjk, squash_whitespace
from evigate.rules.text.phrases import QUESTION_MARKS, question_words, states_root_cause
from evigate.rules.thresholds import THRESHOLDS
from evigate.signatures import ANSWER_VERSION, Claim, EvidenceBinding, ToolInvocation

SESSION_ID = "verify"
TOOL_NAME = "context"
MAX_CLAIMS = 200
"""Sentences past this many are reported, unjudged, as unsupported: the gate's cost stays bounded."""
MAX_EXTRA_PASSAGES = THRESHOLDS.grounding.max_extra_passages
PREVIEW_CHARS = 160
"""How much of an unchecked part of the answer its entry shows."""
MIN_CLAUSE_TOKENS = THRESHOLDS.grounding.min_clause_tokens
"""A clause with fewer content words is not judged on its own (it is part of its neighbour's statement)."""
_CLAUSE = re.compile(
    r"[,;:，；：、]|\s[-–—]\s|(?<![a-z])(?:and|but|because|which|while|whereas|although|though|so|since|after|"
    r"before|when|then|that|whom|who|where)(?![a-z])|因为|由于|但是|并且|而且|所以|因此|导致|然后|之后|以及|同时",
    re.IGNORECASE,
)
_ASKS_EN = re.compile(
    r"^(?:what|why|how|when|where|who|whom|whose|which|is|are|was|were|am|do|does|did|can|could|will|would|should|"
    r"shall|may|might|must|has|have|had|isn't|aren't|wasn't|weren't|don't|doesn't|didn't|can't|couldn't|won't|"
    r"wouldn't|shouldn't|hasn't|haven't|any|anything|anyone|want|wanna|need|care|mind|shall|ready|let me know)"
    r"(?![a-z])"
    r"|(?:,|\s)\s*(?:right|correct|ok|okay|no|yes|or not|isn't it|aren't they|don't you|didn't it|won't it)\s*[?？]$"
)
_ASKS_ZH = re.compile(
    r"[吗呢么吧嘛][?？]?$|什么|为什么|如何|怎么|怎样|哪|谁|是否|几[个次点]|多少|是不是|有没有|能否|可否|可不可以"
)


@dataclass
class SentenceCase:
    """One sentence of the answer: its claim (None when it states nothing) and where it is bound."""

    sentence: Sentence
    claim_id: str | None = None
    bindings: list[Binding] = field(default_factory=list)
    coverage: float = 0.0
    causal: bool = False
    cross_script: bool = False
    note: str = ""
    unchecked: str = ""
    """Why this part of the answer was not judged (past a cap, or an empty answer): it counts against the answer."""
    weakest_clause: tuple[str, float] | None = None
    """The clause whose content words the passages hold least, and that share (None for a one-clause sentence)."""


@dataclass
class GroundingCase:
    """What the Gatekeeper validates: the synthetic executor output and invocations, with the sentence map."""

    passages: list[Passage]
    sentences: list[SentenceCase]
    output: dict[str, Any]
    invocations: list[ToolInvocation]

    def claim(self, claim_id: str) -> dict[str, Any]:
        return next(claim for claim in self.output[CLAIMS] if claim[CLAIM_ID] == claim_id)


def asks(text: str) -> bool:
    """Whether a sentence is shaped as a question: an interrogative or an inverted verb first, a question tag, or a
    Chinese question word or particle. A trailing "?" alone does not make one ("Order 123 failed because an admin
    deleted the database?" still states a cause)."""
    folded = fold(text.strip())
    return bool(_ASKS_EN.search(folded) or _ASKS_ZH.search(folded))


def is_claim(text: str) -> bool:
    """A sentence that asserts something: not a question, not a lead-in such as "Here is a summary:"."""
    stripped = text.strip()
    if question_words(stripped) or (stripped.endswith(QUESTION_MARKS) and asks(stripped)):
        return False
    return not (stripped.endswith((":", "：")) and not extract_entities(stripped))


def _extra_bindings(text: str, primary: Binding, passages: Sequence[Passage]) -> list[Binding]:
    """Other passages that hold what the primary passage lacks (a claim may join facts of two passages)."""
    missing = set(primary.missing)
    lacking = [e for e in extract_entities(text) if not entity_occurs(e, passages[primary.passage].text)]
    extras: list[Binding] = []
    for passage in passages:
        if len(extras) >= MAX_EXTRA_PASSAGES or (not missing and not lacking):
            break
        if passage.index == primary.passage:
            continue
        covers = missing & passage.tokens
        entities = [e for e in lacking if entity_occurs(e, passage.text)]
        if entities or len(covers) * 2 >= max(1, len(missing)):
            binding = bind(text, [passage])
            if binding is not None:
                extras.append(binding)
                missing -= covers
                lacking = [e for e in lacking if e not in entities]
    return extras


def _is_cjk_token(token: str) -> bool:
    return is_cjk(token[:1])


def _coverage(text: str, bindings: Sequence[Binding], passages: Sequence[Passage]) -> tuple[float, bool]:
    """Share of the claim's content tokens its passages hold, and whether some tokens could not be compared.

    Words of a script the bound passages are not written in (a Chinese answer about English logs) cannot be found
    by words: they are left out of the share, and the claim can then not be confirmed by words alone.
    """
    tokens = set(content_tokens(text))
    if not tokens:
        return 1.0, False
    held: set[str] = set()
    scripts: set[bool] = set()
    for binding in bindings:
        passage_tokens = passages[binding.passage].tokens
        held |= tokens & passage_tokens
        scripts |= {_is_cjk_token(token) for token in passage_tokens}
    comparable = {token for token in tokens if _is_cjk_token(token) in scripts}
    if not comparable:
        return 0.0, True
    return len(held & comparable) / len(comparable), len(comparable) < len(tokens)


def _weakest_clause(text: str, bindings: Sequence[Binding], passages: Sequence[Passage]) -> tuple[str, float] | None:
    """The clause of a several-clause claim whose content words its passages hold least (at least
    ``MIN_CLAUSE_TOKENS`` of them), with that share: a sentence mostly quoted may still add an invented clause."""
    clauses = [clause for clause in _CLAUSE.split(text) if clause and clause.strip()]
    if len(clauses) < 2:
        return None
    held: set[str] = set()
    for binding in bindings:
        held |= passages[binding.passage].tokens
    scripts = {_is_cjk_token(token) for token in held}
    weakest: tuple[str, float] | None = None
    for clause in clauses:
        tokens = {token for token in content_tokens(clause) if _is_cjk_token(token) in scripts}
        if len(tokens) < MIN_CLAUSE_TOKENS:
            continue
        share = len(tokens & held) / len(tokens)
        if weakest is None or share < weakest[1]:
            weakest = (clause.strip(), share)
    return weakest


def _unchecked_tail(answer: str) -> SentenceCase | None:
    """The visible text past ``MAX_ANSWER_CHARS``, as one unchecked entry (padding cannot hide text behind the cap)."""
    first = first_visible(answer, MAX_ANSWER_CHARS) if len(answer) > MAX_ANSWER_CHARS else -1
    if first < 0:
        return None
    preview = squash_whitespace(INVISIBLE.sub("", answer[first:first + 4 * PREVIEW_CHARS]))[:PREVIEW_CHARS]
    why = (f"truncated: {len(answer) - MAX_ANSWER_CHARS} chars past the {MAX_ANSWER_CHARS}-character cap "
           "not checked")
    return SentenceCase(Sentence(-1, preview, first, len(answer)), unchecked=why)


def _claim(claim_id: str, text: str, bindings: Sequence[Binding], passages: Sequence[Passage]) -> dict[str, Any]:
    return Claim(
        claim_id=claim_id,
        claim_type="root_cause" if states_root_cause(text) else "symptom",
        claim_text=text,
        support_level="direct",
        evidence_bindings=[
            EvidenceBinding(
                source_type=TOOL_NAME, source_id=passages[b.passage].name, tool_name=TOOL_NAME,
                source_invocation_ids=[b.passage + 1], evidence_excerpt=b.span_text(passages),
            )
            for b in bindings
        ],
    ).model_dump()


def build_case(answer: str, context: Sequence[str] | Mapping[str, str] | str) -> GroundingCase:
    """Split, bind and lay out an answer as one session. Pure; never raises on any text."""
    passages = make_passages(dict(context) if isinstance(context, Mapping) else context)
    invocations = [
        ToolInvocation(id=p.index + 1, session_id=SESSION_ID, tool_name=TOOL_NAME, input={"passage": p.name},
                       output_preview=p.text, success=True)
        for p in passages
    ]
    cases: list[SentenceCase] = []
    claims: list[dict[str, Any]] = []
    unchecked: list[SentenceCase] = []
    for sentence in split_sentences(answer):
        case = SentenceCase(sentence)
        cases.append(case)
        if not is_claim(sentence.text):
            case.note = "not a claim: a question or a lead-in"
            continue
        if len(claims) >= MAX_CLAIMS:
            case.note = f"not judged: the answer has more than {MAX_CLAIMS} claims"
            unchecked.append(case)
            continue
        case.claim_id = f"claim-{len(claims) + 1}"
        case.causal = states_root_cause(sentence.text)
        primary = bind(sentence.text, passages)
        if primary is not None:
            case.bindings = [primary, *_extra_bindings(sentence.text, primary, passages)]
            case.coverage, case.cross_script = _coverage(sentence.text, case.bindings, passages)
            case.weakest_clause = _weakest_clause(sentence.text, case.bindings, passages)
        claims.append(_claim(case.claim_id, sentence.text, case.bindings, passages))
    if unchecked:  # the first sentence past the cap stands for all of them, so the verdict counts them
        unchecked[0].unchecked = f"not judged: {len(unchecked)} sentences past the first {MAX_CLAIMS} claims"
    tail = _unchecked_tail(answer)
    if tail is not None:
        cases.append(tail)
        unchecked.append(tail)
    if not cases:
        empty = SentenceCase(Sentence(0, "", 0, len(answer)), unchecked="the answer is empty: nothing in it to check")
        cases.append(empty)
        unchecked.append(empty)
    for case in unchecked:
        if case.unchecked:
            case.claim_id = f"claim-{len(claims) + 1}"
            claims.append(_claim(case.claim_id, case.sentence.text, [], passages))
    output = {ANSWER_VERSION_KEY: ANSWER_VERSION, CLAIMS: claims}
    return GroundingCase(passages, cases, output, invocations)
