"""check_claim_echo: a Composer may not restate a claim the Verifier did not allow.

``check_composer_output`` sees only the Composer's input, where disallowed claims never appear as facts, so it
cannot notice a Composer that restates one anyway (a model can remember text from its demos, or rebuild a
sentence from entities it was given). The program holds the Executor's claims and the code's decision, so it runs
this second guard: a claim that was contradicted or hit by a reject-level rule must not appear at all; one that is
unsupported, overstated or unknown to the evidence may appear only in a sentence that marks it as unconfirmed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

from evigate.rules.contract import claim_key, claim_text, iter_claims
from evigate.rules.text.normalize import compact, fold
from evigate.rules.text.phrases import is_hedged, sentences
from evigate.rules.thresholds import THRESHOLDS
from evigate.rules.verdict.matrix import ALLOWED_VERIFICATIONS, VerdictDecision

MIN_ECHO_CHARS = THRESHOLDS.answer.min_echo_chars
"""Shorter claim texts (after dropping spaces and punctuation) are too generic to attribute."""
FUZZY_ECHO_SCORE = THRESHOLDS.answer.fuzzy_echo_score
"""partial_ratio at or above this between a claim and a sentence counts as a restatement."""
MIN_ECHO_LENGTH_SHARE = THRESHOLDS.answer.min_echo_length_share


def check_claim_echo(texts: list[str], normalized: Mapping[str, Any] | None, decision: VerdictDecision) -> list[str]:
    """Violations for every disallowed claim that ``texts`` restate (as fact, or at all if it was forbidden)."""
    allowed, disallowed = _claims_by_standing(normalized, decision)
    problems: list[str] = []
    pieces = [sentence for text in texts for sentence in sentences(text)]
    for key, (claim, forbidden) in disallowed.items():
        if claim in allowed:
            continue  # the same statement was also made, and allowed, as another claim
        for sentence in pieces:
            if not _restates(claim, compact(fold(sentence))):
                continue
            if forbidden:
                problems.append(f"restates {key}, a claim the evidence contradicts or that cites unverifiable evidence")
            elif not is_hedged(sentence):
                problems.append(f"states {key} as fact although the Verifier did not allow it")
            else:
                continue
            break
    return problems


def _claims_by_standing(
    normalized: Mapping[str, Any] | None, decision: VerdictDecision
) -> tuple[set[str], dict[str, tuple[str, bool]]]:
    allowed: set[str] = set()
    disallowed: dict[str, tuple[str, bool]] = {}
    excluded = set(decision.excluded_claims)
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        text = compact(fold(claim_text(claim)))
        if len(text) < MIN_ECHO_CHARS:
            continue
        verification = decision.effective_checks.get(key, "unsupported")
        if key not in excluded and verification in ALLOWED_VERIFICATIONS:
            allowed.add(text)
        else:
            disallowed[key] = (text, key in excluded or verification == "contradicted")
    return allowed, disallowed


def _restates(claim: str, sentence: str) -> bool:
    if claim in sentence:
        return True
    # partial_ratio aligns the shorter string inside the longer one: a short sentence would "match" any claim
    # that contains it, so only sentences at least about as long as the claim are compared fuzzily.
    return (len(sentence) >= MIN_ECHO_LENGTH_SHARE * len(claim)
            and fuzz.partial_ratio(claim, sentence) >= FUZZY_ECHO_SCORE)
