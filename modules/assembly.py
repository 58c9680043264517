"""Assembling a program's deterministic parts from settings (the agents are built in ``DiagnosisProgram``)."""

from __future__ import annotations

from evigate.domain import Domain
from evigate.rules import Gatekeeper
from evigate.settings import Settings


def gatekeeper_from_settings(settings: Settings, domain: Domain) -> Gatekeeper:
    """The settings' rule set (a rules file or the built-in one), with their overrides and the domain's names."""
    gk_settings = settings.gatekeeper
    gatekeeper = Gatekeeper.from_yaml(gk_settings.rules_file) if gk_settings.rules_file else Gatekeeper.default()
    overrides_map = dict(gk_settings.overrides)
    if not gk_settings.enabled:
        overrides_map = {rule_id: {"enabled": False} for rule_id in gatekeeper.verdict_impacts}
    if overrides_map:
        gatekeeper = gatekeeper.with_overrides(overrides_map)
    return gatekeeper.with_vocabulary(domain.entity_vocabulary())  # the domain's names are entities too
