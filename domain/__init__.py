"""Domains: what is specific to one organisation's incidents (vocabulary, skills, knowledge, sources, tools).

    from evigate.domain import load_domain
    domain = load_domain("./my-domain")      # or "demo", or "package.module:attribute", or a Domain object
    domain.extract_entities("checkout-api 5xx since 14:03")
"""

from __future__ import annotations

from evigate.domain.loader import BUILTIN_DOMAINS, DEFAULT_DOMAIN, DOMAIN_FILE, load_domain, load_domain_dir
from evigate.domain.model import Domain
from evigate.domain.skills import Skill, SkillStep, fill_placeholders, load_skills, template_values
from evigate.rules.text.question import EntityExtractor
from evigate.rules.text.vocabulary import IdPattern, IdRegex, Vocabulary

__all__ = [
    "BUILTIN_DOMAINS", "DEFAULT_DOMAIN", "DOMAIN_FILE", "Domain", "EntityExtractor", "IdPattern", "IdRegex", "Skill",
    "SkillStep", "Vocabulary", "fill_placeholders", "load_domain", "load_domain_dir", "load_skills",
    "template_values",
]
