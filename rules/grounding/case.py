"""An answer and its context as one synthetic diagnosis session, so the Gatekeeper and the verdict matrix judge it.

Each passage becomes one successful invocation of a tool named ``context``; each sentence that states something
becomes one claim bound to the passages that cover it, its excerpt the best-matching span (verbatim, so the excerpt
rules see real evidence and the entity rules compare the claim with the passages it cites).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules.grounding.binding import Binding, Passage, bind, content_tokens, make_passages
from evigate.rules.grounding.sentences import Sentence, split_sentences
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.phrases import is_question, states_root_cause
from evigate.signatures import ANSWER_VERSION, ToolInvocation

SESSION_ID = "verify"
TOOL_NAME = "context"
MAX_CLAIMS = 200
"""Sentences past this many are reported, unjudged, as unsupported: the gate's cost stays bounded."""
MAX_EXTRA_PASSAGES = 2


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


@dataclass
class GroundingCase:
    """What the Gatekeeper validates: the synthetic executor output and invocations, with the sentence map."""

    passages: list[Passage]
    sentences: list[SentenceCase]
    output: dict[str, Any]
    invocations: list[ToolInvocation]

    def claim(self, claim_id: str) -> dict[str, Any]:
        return next(claim for claim in self.output["claims"] if claim["claim_id"] == claim_id)


def is_claim(text: str) -> bool:
    """A sentence that asserts something: not a question, not a lead-in such as "Here is a summary:"."""
    stripped = text.strip()
    if is_question(stripped):
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
    return token[:1] >= "\u3400"


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


def _claim(claim_id: str, text: str, bindings: Sequence[Binding], passages: Sequence[Passage]) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "claim_type": "root_cause" if states_root_cause(text) else "symptom",
        "claim_text": text,
        "support_level": "direct",
        "evidence_bindings": [
            {
                "source_type": TOOL_NAME, "source_id": passages[b.passage].name, "tool_name": TOOL_NAME,
                "source_invocation_ids": [b.passage + 1], "evidence_excerpt": b.span_text(passages),
            }
            for b in bindings
        ],
    }


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
    for sentence in split_sentences(answer):
        case = SentenceCase(sentence)
        cases.append(case)
        if not is_claim(sentence.text):
            case.note = "not a claim: a question or a lead-in"
            continue
        if len(claims) >= MAX_CLAIMS:
            case.note = f"not judged: the answer has more than {MAX_CLAIMS} claims"
            continue
        case.claim_id = f"claim-{len(claims) + 1}"
        case.causal = states_root_cause(sentence.text)
        primary = bind(sentence.text, passages)
        if primary is not None:
            case.bindings = [primary, *_extra_bindings(sentence.text, primary, passages)]
            case.coverage, case.cross_script = _coverage(sentence.text, case.bindings, passages)
        claims.append(_claim(case.claim_id, sentence.text, case.bindings, passages))
    output = {"answer_version": ANSWER_VERSION, "claims": claims}
    return GroundingCase(passages, cases, output, invocations)
