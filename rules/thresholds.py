"""The heuristic thresholds of the deterministic core: ``rules/thresholds.yaml``, typed, read once at import.

Rule parameters live with their rule (``rules/metadata``); every other value code judges by (a weight, a share, a
similarity score, a minimum length) is a field here, with what it decides as its description. Modules keep their
named constants (``MIN_CONFIRM_WEIGHT = THRESHOLDS.confirmation.min_confirm_weight``) so call sites read the same;
``tests/rules/test_thresholds.py`` fails when a number of that kind is written in code instead.
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from evigate.errors import RuleConfigError


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class Confirmation(_Section):
    """docs/confirmation.md sections 1–2 (rules/verdict/confirmation.py)."""

    min_confirm_weight: int = Field(description="a restated text (or a quoted excerpt) lighter than this is too "
                                                "generic to confirm, to observe or to count as quoted")
    side_coverage: float = Field(description="share of each side of a causal claim's words (ASCII words of 3+ "
                                             "characters, CJK bigrams) the excerpts of one invocation must quote "
                                             "for the cited output itself to state the cause")


class JunkClaims(_Section):
    """docs/confirmation.md sections 4–4b (rules/verdict/junk_claims.py)."""

    max_excerpt_chars: int = Field(description="an observed line (or excerpt) is cut at a space past this many "
                                               "characters")
    min_copied_weight: int = Field(description="a claim text at least this heavy found in the Executor's prompt is "
                                               "junk (copied from the prompt)")
    min_kept_share: float = Field(description="share of an excerpt's weight the start one returned line holds must "
                                              "keep to stand for the whole excerpt")
    max_subject_chars: int = Field(description="a call argument longer than this is not named as what the call was "
                                               "about")


class AnchorObservations(_Section):
    """docs/confirmation.md section 4d (rules/verdict/anchor_observations.py)."""

    max_observations: int = Field(description="returned lines naming the question's anchors code adds per round")
    max_richness: int = Field(description="entities counted when two lines name the same anchors: past this many, a "
                                          "longer line says no more")
    min_id_digits: int = Field(description="a bare number in the question is an anchor from this many digits on")


class Scoring(_Section):
    """The evidence score and the groundedness score (rules/verdict/scoring.py, matrix.py)."""

    weights: dict[str, float] = Field(description="points of each evidence-score factor")
    diversity_target: int = Field(description="citing this many different evidence tools earns the full diversity "
                                              "points")
    warn_credit: float = Field(description="what a warning counts for, against 1 for a pass or a failure")
    label_scores: dict[str, float] = Field(description="groundedness of each claim label")


class Answer(_Section):
    """The answer guards (rules/answer/claim_echo.py, composer_guard.py)."""

    min_echo_chars: int = Field(description="shorter claim texts (spaces and punctuation dropped) are too generic "
                                            "to attribute to an answer sentence")
    fuzzy_echo_score: float = Field(description="partial_ratio (0-100) at or above which a sentence restates a "
                                                "claim")
    min_echo_length_share: float = Field(description="a sentence shorter than this share of a claim is never "
                                                     "compared fuzzily with it")
    hypothesis_as_fact: float = Field(description="share of a hypothesis's assertion an unhedged sentence must carry "
                                                  "to state it as fact")
    min_hypothesis_weight: int = Field(description="a hypothesis assertion lighter than this is not looked for in "
                                                   "the answer")


class Grounding(_Section):
    """Grounding an answer in context passages (rules/grounding)."""

    direct_from: float = Field(description="coverage from which a claim is a direct_observation")
    unsupported_below: float = Field(description="coverage below which a claim is unsupported")
    clause_unsupported_below: float = Field(description="a clause of three or more content words held below this "
                                                        "makes its claim unsupported")
    min_clause_tokens: int = Field(description="a clause with fewer content words is not judged on its own")
    max_extra_passages: int = Field(description="passages bound to one sentence beside its best one")
    min_contradiction_clause_tokens: int = Field(description="a clause with fewer content words is not matched to "
                                                             "a span clause for a flipped negation")
    min_negation_span_coverage: float = Field(description="share of a clause's words its span clause must hold "
                                                          "before their negations are compared")


class Text(_Section):
    """Text comparison (rules/text: normalize.py, restating.py, numbers.py)."""

    min_block_weight: int = Field(description="a matched block lighter than this is treated as chance")
    min_truncation_overlap: int = Field(description="characters of an excerpt that must match the very end of a "
                                                    "truncated preview before the rest is excused")
    min_aligned_score: float = Field(description="partial_ratio (0-100) above which an excerpt segment nearly "
                                                 "copies one place of the output")
    min_located_score: float = Field(description="partial_ratio (0-100) below which an aligned window is no place "
                                                 "worth showing as the excerpt's source")
    restates_similarity: float = Field(description="Indel similarity from which a text only says another again")
    restates_coverage: float = Field(description="a claim covering this share of a verbatim excerpt restates it")
    min_restated_chars: int = Field(description="an excerpt with fewer characters left once its values are set "
                                                "aside is too short to tell restating from overlap")
    context_chars: int = Field(description="text next to a value that must match for a written value to stand in "
                                           "its place")
    approximate_tolerance: float = Field(description="relative tolerance of an approximate number")
    misspelling_share: float = Field(description="edits (a transposition counts one) per character of a known name "
                                                 "that a name-shaped word of the question may be away from it and "
                                                 "still be read as that name; at least one edit")


class Junk(_Section):
    """The junk checks (rules/text/junk.py; their vocabulary is rules/text/junk.yaml)."""

    min_run: int = Field(description="a unit written this many times in a row is a degenerate repetition")
    max_unit_tokens: int = Field(description="longest unit (in words, numbers or CJK characters) a repetition is "
                                             "looked for in")
    min_phrase_weight: int = Field(description="a phrase at least this heavy written min_phrase_repeats times is "
                                               "filler")
    min_phrase_repeats: int = Field(description="how often such a phrase is written in one text")
    min_repeated_share: float = Field(description="share of a text's weight the repeated phrase must cover")
    echo_share: float = Field(description="a text this much made of pieces of the question restates it")
    min_echo_weight: int = Field(description="texts lighter than this are too short to judge as the question "
                                             "restated")
    min_premise_terms: int = Field(description="a claim of this many content terms or more, all of them the "
                                               "question's, restates the question")
    unnamed_premise_share: float = Field(description="a claim naming no id, code, service, time or value whose "
                                                     "content terms are this much the question's restates it")
    min_basis_terms: int = Field(description="content terms a tool returned that a hypothesis's basis must name")
    borrowed_share: float = Field(description="a claim whose terms the cited calls did not return are this much a "
                                              "knowledge document's words borrows them (premise.borrowed_reason)")
    min_runbook_link_terms: int = Field(description="content terms of the question a knowledge document's line must "
                                                    "name beside an entity to link that entity to the question")
    min_word_chars: int = Field(description="ASCII words shorter than this carry no content of their own")


class Thresholds(_Section):
    """``rules/thresholds.yaml``."""

    confirmation: Confirmation
    junk_claims: JunkClaims
    anchor_observations: AnchorObservations
    scoring: Scoring
    answer: Answer
    grounding: Grounding
    text: Text
    junk: Junk


def parse_thresholds(document: Any, where: str = "rules/thresholds.yaml") -> Thresholds:
    """The thresholds of a parsed YAML document; a missing, unknown or mistyped key is a RuleConfigError."""
    try:
        return Thresholds.model_validate(document)
    except ValueError as error:
        raise RuleConfigError(f"{where}: {error}") from error


def _load() -> Thresholds:
    text = resources.files("evigate.rules").joinpath("thresholds.yaml").read_text("utf-8")
    return parse_thresholds(yaml.safe_load(text))


THRESHOLDS: Final = _load()
"""The shipped thresholds, read once."""
