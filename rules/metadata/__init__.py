"""Gatekeeper rule metadata (§10.2), one YAML file per rule named after the rule id. Data only."""
