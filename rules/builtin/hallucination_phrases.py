"""claim.hallucination_phrases — §11.4: confirmed claims use no experience-based or speculative wording."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import Field, field_validator

from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.text.normalize import fold

_FIELD_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[\])?)*$")


def resolve_path(data: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Values at a field path such as ``claims[].claim_text`` with their concrete paths (``claims[2].claim_text``)."""
    nodes: list[tuple[str, Any]] = [("", data)]
    for part in path.split("."):
        name, many = (part[:-2], True) if part.endswith("[]") else (part, False)
        following: list[tuple[str, Any]] = []
        for prefix, node in nodes:
            if not isinstance(node, dict) or name not in node:
                continue
            here = f"{prefix}.{name}" if prefix else name
            value = node[name]
            if many:
                if isinstance(value, list):
                    following.extend((f"{here}[{index}]", item) for index, item in enumerate(value))
            else:
                following.append((here, value))
        nodes = following
    yield from nodes


def _excerpts(data: Any, concrete: str) -> list[str]:
    """The evidence excerpts beside the field at ``concrete`` (``claims[2].claim_text`` → claims[2]'s bindings)."""
    owner = concrete.rsplit(".", 1)[0] + "."
    return [excerpt for path, excerpt in resolve_path(data, "claims[].evidence_bindings[].evidence_excerpt")
            if path.startswith(owner) and isinstance(excerpt, str)]


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    folded = re.escape(fold(phrase))
    # Latin phrases match whole words only ("usually" must not hit "unusually"); CJK phrases match anywhere.
    return re.compile(rf"(?<![a-z]){folded}(?![a-z])" if phrase.isascii() else folded)


class HallucinationPhrasesParams(RuleParams):
    """Values come from rules/metadata/claim.hallucination_phrases.yaml, the one source of the phrase list (the
    Executor's prompt quotes some of them; tests/rules/test_rules_defaults.py keeps the two in step)."""

    target_fields: list[str] = Field(min_length=1)
    blacklist: list[str]
    allow_in_fields: list[str]
    allow_quoted: bool = Field(
        default=False,
        description="a phrase the claim's own evidence excerpts hold is quoted, not guessed (off by §11.4; on for "
                    "evigate verify, where restating a passage's 'usually' is faithful to it)",
    )

    @field_validator("target_fields", "allow_in_fields")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not _FIELD_PATH.match(path):
                raise ValueError(f"'{path}' is not a field path like claims[].claim_text")
        return paths


class HallucinationPhrases(Rule):
    """Confirmed claims contain no experience-based or speculative wording (通常情况下, 根据经验, 我认为, probably …).

    Every field in `targetFields` (by default `claims[].claim_text`) is searched, case-insensitively and after
    full-width normalisation, for each `blacklist` phrase; Latin phrases match whole words only. Fields in
    `allowInFields` (hypotheses and their basis) are where such wording belongs and are never searched, even if a
    target pattern would cover them. A hit means a guess was written as a fact: LOW_CONFID-level. With
    `allowQuoted` (evigate verify sets it), a phrase the claim's own evidence excerpts hold is the evidence's wording,
    not a guess.
    """

    id = "claim.hallucination_phrases"
    Params = HallucinationPhrasesParams

    def validate(self, context: RuleContext, params: HallucinationPhrasesParams) -> list[RuleFinding]:
        patterns = context.memo.get(("phrases", tuple(params.blacklist)))
        if patterns is None:
            patterns = [(phrase, _phrase_pattern(phrase)) for phrase in params.blacklist if phrase.strip()]
            context.memo[("phrases", tuple(params.blacklist))] = patterns
        allowed = {
            concrete for path in params.allow_in_fields for concrete, _ in resolve_path(context.data, path)
        }
        findings: list[RuleFinding] = []
        for path in params.target_fields:
            for concrete, value in resolve_path(context.data, path):
                if concrete in allowed or not isinstance(value, str):
                    continue
                text = fold(value)
                hits = [phrase for phrase, pattern in patterns if pattern.search(text)]
                if hits and params.allow_quoted:
                    quoted = fold(" ".join(_excerpts(context.data, concrete)))
                    hits = [phrase for phrase, pattern in patterns if phrase in hits and not pattern.search(quoted)]
                if hits:
                    findings.append(RuleFinding(
                        concrete, "speculative wording in a confirmed claim: " + ", ".join(f"'{hit}'" for hit in hits)
                    ))
        return findings
