"""check_composer_output: the output guard between the Composer and the user (§19.4 and ARCHITECTURE "Composer").

Violations: an entity (service, id, error code, time, key value) absent from the Composer's input; a root-cause
statement unless an allowed root_cause claim exists and the verdict is PASS; a hypothesis stated as fact;
Markdown or JSON; a LOW_CONFID answer naming no gap or next step; an empty answer; a line that names nothing of the
input (filler); words in another language than the input's ``locale`` that the input does not hold. ``[]`` means
safe to show.

The input's ``rationale`` is an explanation, not allowed material: entities that only it names do not count as
given (a Verifier may mention a dropped claim there).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from evigate.rules.answer.catalogue import FIXED_TEXTS, line_body
from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.junk import content_free, content_terms, echoes_question, repetition
from evigate.rules.text.normalize import compact, content_weight, excerpt_similarity, fold
from evigate.rules.text.phrases import (
    GAP_OR_NEXT_STEP,
    is_hedged,
    is_suggestion,
    sentences,
    states_root_cause,
    strip_hedges,
)
from evigate.rules.text.words import cjk_runs
from evigate.rules.thresholds import THRESHOLDS
from evigate.signatures import ComposerInput, ComposerOutput

_MARKDOWN = (
    (re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE), "a Markdown heading"),
    (re.compile(r"^\s*[-*+]\s+\S", re.MULTILINE), "a Markdown bullet list"),
    (re.compile(r"^\s*\d{1,3}[.)]\s+\S", re.MULTILINE), "a Markdown numbered list"),
    (re.compile(r"^\s*>\s", re.MULTILINE), "a Markdown quote"),
    (re.compile(r"```|~~~"), "a code fence"),
    (re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__"), "Markdown emphasis"),
    (re.compile(r"\[[^\]\n]+\]\([^)\n]+\)"), "a Markdown link"),
    (re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE), "a Markdown table"),
    (re.compile(r"`[^`\n]+`"), "inline code"),
    (re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$", re.MULTILINE), "a Markdown rule"),
)
_JSON_FRAGMENT = re.compile(r"\{\s*\"[^\"\n]{1,80}\"\s*:|\"[A-Za-z_][A-Za-z0-9_]{0,60}\"\s*:\s*[\"{\[\d]")
HYPOTHESIS_AS_FACT = THRESHOLDS.answer.hypothesis_as_fact
"""Share of a hypothesis's assertion an unhedged sentence must carry to count as stating it as fact."""
MIN_HYPOTHESIS_WEIGHT = THRESHOLDS.answer.min_hypothesis_weight


def coerce_composer_output(composer_output: Any) -> ComposerOutput | None:
    """A ComposerOutput from a model, a mapping or JSON text; None when it honours no contract."""
    if isinstance(composer_output, ComposerOutput):
        return composer_output
    try:
        if isinstance(composer_output, str | bytes):
            return ComposerOutput.model_validate_json(composer_output)
        return ComposerOutput.model_validate(composer_output)
    except (ValidationError, ValueError, TypeError):
        return None


def material_text(composer_input: ComposerInput) -> str:
    """Everything the Composer may draw entities from, folded (the rationale excluded)."""
    parts = [composer_input.original_query]
    parts += [claim.claim_text for claim in composer_input.allowed_claims]
    for hypothesis in composer_input.allowed_hypotheses:
        parts.append(hypothesis.hypothesis_text)
        parts.extend(hypothesis.needed_evidence)
    parts += composer_input.missing_info
    for action in composer_input.recommended_actions:
        parts += [action.action_text, action.reason]
    return fold("\n".join(parts))


def markup_problems(text: str) -> list[str]:
    """Markdown or JSON in user-facing text."""
    problems = [f"answer contains {what}" for pattern, what in _MARKDOWN if pattern.search(text)]
    stripped = text.strip()
    looks_json = False
    if stripped[:1] and stripped[0] in "{[":
        try:
            looks_json = isinstance(json.loads(stripped), dict | list)
        except ValueError:
            looks_json = False
    if looks_json or _JSON_FRAGMENT.search(text):
        problems.append("answer contains JSON")
    return problems


def foreign_entities(text: str, material: str) -> list[str]:
    """Entities of ``text`` that the material does not contain (numbers by value; bare one-digit counts ignored)."""
    # The material is case-folded, so each entity is looked up folded too (measured: "HikariPool-1" in an allowed
    # claim made every line stating it "foreign": a name's lower-case form is searched only as a whole word).
    return [
        entity.text for entity in extract_entities(text)
        if entity.is_key_value and not entity_occurs(entity, material)
        and not entity_occurs(replace(entity, text=fold(entity.text)), material)
    ]


_LATIN_PHRASE = re.compile(r"[A-Za-z]+(?:[ ,'’-]+[A-Za-z]+){3,}")
"""Four or more Latin words in a row: an English phrase, not a name ("pay-gateway", "query_logs")."""


def other_language(text: str, material: str, locale: str | None) -> list[str]:
    """Phrases of ``text`` in another language than ``locale`` that the (folded) material does not hold.

    Measured on train (0.5B default): for "Was coupon-service failing at 14:10?" the Composer wrote
    "当前证据不足以确认一个结论" and it was shown under English headings. Quoting a claim in its own language is
    fine (a Chinese runbook line in an English answer): only words the input does not hold count."""
    if locale == "en":
        phrases = cjk_runs(text, min_chars=2)
    elif locale == "zh":
        phrases = _LATIN_PHRASE.findall(text)
    else:
        return []
    given = compact(material)
    return [phrase for phrase in phrases if not any(compact(fold(phrase)) in known for known in (given, _FIXED))]


_FIXED = "\n".join(compact(fold(text)) for text in FIXED_TEXTS)
"""The template's own texts in every locale: the product's words, in whichever language they are shown."""


def filler_lines(text: str, material: str) -> list[str]:
    """Lines of ``text`` that name nothing of the material (``content_free``): "当前证据不足以确认一个结论" says
    what the template already says, about nothing the user asked. A heading (a line ending in a colon) introduces
    what follows and is not judged alone; the template's own fixed texts and the input's own items (judged where the
    input was built) are no filler of the Composer's either, nor is a line with no content word at all (a
    separator, a bare name: the entity and repetition checks judge those)."""
    given = {compact(line) for line in material.splitlines()}
    lines = [line_body(line) for line in text.splitlines()]
    return [line for line in lines if line and not line.endswith((":", "：")) and line not in FIXED_TEXTS
            and compact(fold(line)) not in given and content_terms(line) and content_free(line, material)]


def root_cause_allowed(composer_input: ComposerInput) -> bool:
    """Root-cause statements are allowed only under PASS with an allowed root_cause claim (§19.4)."""
    return composer_input.verdict == "PASS" and any(
        claim.claim_type == "root_cause" for claim in composer_input.allowed_claims
    )


def hypotheses_stated_as_fact(composer_input: ComposerInput, text: str) -> list[str]:
    """Sentences that restate an allowed hypothesis as fact: no hedge ("可能", "尚未确认", "might"), not a suggestion
    ("建议检查…"), and carrying most of the hypothesis's assertion. A hypothesis that is itself an allowed claim may
    be stated plainly."""
    stated = []
    claims = [(fold(claim.claim_text), False) for claim in composer_input.allowed_claims]
    for hypothesis in composer_input.allowed_hypotheses:
        core = strip_hedges(hypothesis.hypothesis_text)
        if content_weight(core) < MIN_HYPOTHESIS_WEIGHT:
            continue
        if claims and excerpt_similarity(core, claims) >= HYPOTHESIS_AS_FACT:
            continue  # the same statement is an allowed claim: saying it plainly is fine
        for sentence in sentences(text):
            if is_hedged(sentence) or is_suggestion(sentence):
                continue
            if excerpt_similarity(core, [(fold(sentence), False)]) >= HYPOTHESIS_AS_FACT:
                stated.append(f"hypothesis stated as fact: “{sentence[:120]}”")
                break
    return stated


def check_text(composer_input: ComposerInput, text: str, material: str | None = None) -> list[str]:
    """The content checks of one user-facing text."""
    material = material_text(composer_input) if material is None else material
    problems = markup_problems(text)
    problems += [f"entity '{name}' is not in the composer input" for name in foreign_entities(text, material)]
    if not root_cause_allowed(composer_input):
        problems += [
            f"root-cause statement not allowed under {composer_input.verdict}: “{sentence[:120]}”"
            for sentence in sentences(text) if states_root_cause(sentence)
        ]
    problems += hypotheses_stated_as_fact(composer_input, text)
    # Issue 18: junk is never shown, whoever wrote it: "订单 456 456 456 456", "补足证据是补足证据的必要步骤".
    # Sentence by sentence: two bullets naming the same service are no run.
    problems += [f"junk text: {why}" for why in (repetition(sentence) for sentence in sentences(text)) if why]
    return problems


def check_composer_output(
    composer_input: ComposerInput, composer_output: ComposerOutput | Mapping[str, Any] | str | None
) -> list[str]:
    """Violations of the Composer's output against its input; ``[]`` = safe to show. Never raises on data."""
    output = coerce_composer_output(composer_output)
    if output is None:
        return ["composer output is not a valid ComposerOutput (needs answer_summary and user_facing_answer)"]
    answer = output.user_facing_answer.strip()
    if not answer:
        return ["user_facing_answer is empty"]
    material = material_text(composer_input)
    problems: list[str] = []
    texts = [answer, output.answer_summary]
    texts += [f"{action.action_text}\n{action.reason}" for action in output.recommended_actions]
    for text in texts:
        for problem in check_text(composer_input, text, material):
            if problem not in problems:
                problems.append(problem)
    query = composer_input.original_query
    # An allowed claim passed the claim rules (a premise restated stands only where its evidence shows it all):
    # saying it is no echo, even where the user reported the same facts.
    claims = [compact(fold(claim.claim_text)) for claim in composer_input.allowed_claims]
    problems += [f"the answer restates the question: “{sentence[:120]}”" for sentence in sentences(answer)
                 if query and echoes_question(sentence, query)
                 and not any(compact(fold(sentence)) in claim for claim in claims)]
    problems += [f"written in another language than the answer's ({composer_input.locale}): “{phrase[:60]}”"
                 for phrase in other_language(answer, material, composer_input.locale)]
    problems += [f"filler: names nothing of its input: “{line[:120]}”" for line in filler_lines(answer, material)]
    if composer_input.verdict == "LOW_CONFID" and not GAP_OR_NEXT_STEP.search(fold(answer)):
        problems.append("a LOW_CONFID answer must name at least one evidence gap or next step")
    return problems
