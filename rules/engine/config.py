"""Loading the rule index (§10.1) and metadata (§10.2) from YAML, and applying settings overrides.

Every problem is a :class:`~evigate.errors.RuleConfigError` whose message names the file (or "overrides") and the
offending rule and key. The shipped files are read with importlib.resources so wheel installs work too.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import ValidationError

from evigate.errors import RuleConfigError
from evigate.rules.builtin import RULE_CLASSES
from evigate.rules.gate.base import Rule, RuleParams, RuleSpec, Severity
from evigate.signatures.gatekeeper import VerdictImpact

INDEX_KEYS = frozenset({"id", "name", "description", "enabled"})
METADATA_KEYS = frozenset({"id", "severity", "verdictImpact", "params"})
OVERRIDE_KEYS = frozenset({"enabled", "severity", "verdictImpact", "verdict_impact", "params", "name", "description"})
SEVERITIES = ("error", "warning")
IMPACTS = ("reject_on_fail", "low_confid_on_fail", "warn_only")


def _read_yaml(text: str, where: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise RuleConfigError(f"{where}: not valid YAML: {error}") from error


def _mapping(value: Any, where: str, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RuleConfigError(f"{where}: {what} must be a mapping, got {type(value).__name__}")
    return value


def _unknown_keys(entry: Mapping[str, Any], allowed: frozenset[str], where: str, rule_id: str) -> None:
    unknown = sorted(str(key) for key in entry if key not in allowed)
    if unknown:
        raise RuleConfigError(
            f"{where}: rule '{rule_id}': unknown key '{unknown[0]}' (allowed: {', '.join(sorted(allowed))})"
        )


def _rule_class(rule_id: Any, where: str) -> type[Rule]:
    if not isinstance(rule_id, str) or rule_id not in RULE_CLASSES:
        raise RuleConfigError(f"{where}: unknown rule '{rule_id}' (known: {', '.join(RULE_CLASSES)})")
    return RULE_CLASSES[rule_id]


def _aliased(params_model: type[RuleParams], raw: Mapping[str, Any]) -> dict[str, Any]:
    """User keys in camelCase or snake_case, turned into the YAML (camelCase) spelling."""
    alias_of = {name: field.alias or name for name, field in params_model.model_fields.items()}
    return {alias_of.get(str(key), str(key)): value for key, value in raw.items()}


def build_params(rule_class: type[Rule], raw: Mapping[str, Any], where: str) -> RuleParams:
    """Validate a rule's params; unknown keys and bad values are errors naming file, rule and key."""
    model = rule_class.Params
    try:
        return model.model_validate(_aliased(model, raw))
    except ValidationError as error:
        known = ", ".join(field.alias or name for name, field in model.model_fields.items()) or "none"
        problems = []
        for detail in error.errors(include_url=False, include_input=False):
            key = ".".join(str(part) for part in detail["loc"]) or "params"
            if detail["type"] == "extra_forbidden":
                problems.append(f"unknown parameter '{key}' (known: {known})")
            else:
                problems.append(f"parameter '{key}': {detail['msg']}")
        raise RuleConfigError(f"{where}: rule '{rule_class.id}': " + "; ".join(problems)) from error


def _check_choice(value: Any, choices: tuple[str, ...], where: str, rule_id: str, key: str) -> str:
    if value not in choices:
        raise RuleConfigError(f"{where}: rule '{rule_id}': {key} must be one of {', '.join(choices)}, got {value!r}")
    return str(value)


def _check_bool(value: Any, where: str, rule_id: str, key: str) -> bool:
    if not isinstance(value, bool):
        raise RuleConfigError(f"{where}: rule '{rule_id}': {key} must be true or false, got {value!r}")
    return value


def merge_entry(spec: RuleSpec, entry: Mapping[str, Any], where: str) -> RuleSpec:
    """A spec with the given index/metadata/override keys applied; params merge key by key."""
    rule_class = _rule_class(spec.id, where)
    changes: dict[str, Any] = {"source": where}
    for key in ("name", "description"):
        if key in entry:
            changes[key] = str(entry[key])
    if "enabled" in entry:
        changes["enabled"] = _check_bool(entry["enabled"], where, spec.id, "enabled")
    if "severity" in entry:
        changes["severity"] = _check_choice(entry["severity"], SEVERITIES, where, spec.id, "severity")
    for key in ("verdictImpact", "verdict_impact"):
        if key in entry:
            changes["verdict_impact"] = _check_choice(entry[key], IMPACTS, where, spec.id, key)
    if "params" in entry:
        raw = _mapping(entry["params"], f"{where}: rule '{spec.id}'", "params")
        merged = {**spec.params.model_dump(by_alias=True), **_aliased(rule_class.Params, raw)}
        changes["params"] = build_params(rule_class, merged, where)
    return spec.model_copy(update=changes)


def _new_spec(rule_id: str, index_entry: Mapping[str, Any], metadata: Mapping[str, Any], where: str) -> RuleSpec:
    rule_class = _rule_class(rule_id, where)
    for key in ("name", "description"):
        if not isinstance(index_entry.get(key), str):
            raise RuleConfigError(f"{where}: rule '{rule_id}': '{key}' is required in the index")
    for key in ("severity", "verdictImpact"):
        if key not in metadata:
            raise RuleConfigError(f"{where}: rule '{rule_id}': metadata key '{key}' is required")
    return RuleSpec(
        id=rule_id,
        name=index_entry["name"],
        description=index_entry["description"],
        enabled=_check_bool(index_entry.get("enabled", True), where, rule_id, "enabled"),
        severity=cast(Severity, _check_choice(metadata["severity"], SEVERITIES, where, rule_id, "severity")),
        verdictImpact=cast(
            VerdictImpact, _check_choice(metadata["verdictImpact"], IMPACTS, where, rule_id, "verdictImpact")
        ),
        params=build_params(rule_class, _mapping(metadata.get("params"), where, "params"), where),
        source=where,
    )


def _index_entries(document: Any, where: str) -> list[Mapping[str, Any]]:
    rules = _mapping(document, where, "the index").get("rules")
    if not isinstance(rules, list):
        raise RuleConfigError(f"{where}: 'rules' must be a list of rule entries")
    entries = []
    seen: set[str] = set()
    for position, entry in enumerate(rules):
        entry = _mapping(entry, where, f"rules[{position}]")
        rule_id = entry.get("id")
        _rule_class(rule_id, where)
        if rule_id in seen:
            raise RuleConfigError(f"{where}: rule '{rule_id}' is listed twice")
        seen.add(str(rule_id))
        entries.append(entry)
    return entries


def _metadata_document(text: str, where: str, rule_id: str) -> Mapping[str, Any]:
    metadata = _mapping(_read_yaml(text, where), where, "rule metadata")
    _unknown_keys(metadata, METADATA_KEYS, where, rule_id)
    if metadata.get("id", rule_id) != rule_id:
        raise RuleConfigError(f"{where}: id '{metadata.get('id')}' does not match the file name (rule '{rule_id}')")
    return metadata


def load_builtin_specs() -> dict[str, RuleSpec]:
    """The shipped index and metadata: every registered rule, in index order."""
    package = resources.files("evigate.rules")
    where = "evigate/rules/index.yaml"
    entries = _index_entries(_read_yaml(package.joinpath("index.yaml").read_text("utf-8"), where), where)
    metadata_dir = package.joinpath("metadata")
    specs: dict[str, RuleSpec] = {}
    for entry in entries:
        _unknown_keys(entry, INDEX_KEYS, where, entry["id"])
        file = metadata_dir.joinpath(f"{entry['id']}.yaml")
        file_where = f"evigate/rules/metadata/{entry['id']}.yaml"
        if not file.is_file():
            raise RuleConfigError(f"{file_where}: missing metadata for rule '{entry['id']}'")
        metadata = _metadata_document(file.read_text("utf-8"), file_where, entry["id"])
        specs[entry["id"]] = _new_spec(entry["id"], entry, metadata, file_where)
    missing = sorted(set(RULE_CLASSES) - set(specs))
    if missing:
        raise RuleConfigError(f"{where}: registered rules missing from the index: {', '.join(missing)}")
    return specs


def load_user_specs(path: str | Path, base: Mapping[str, RuleSpec]) -> dict[str, RuleSpec]:
    """A user's copy layered over ``base``: a directory (index.yaml + metadata/<id>.yaml) or one YAML file.

    The single-file form holds ``rules:`` (index entries, which may also carry severity/verdictImpact/params) and an
    optional ``ruleMetadata:`` mapping of rule id → metadata, i.e. §10.1 and §10.2 pasted together. Rules the copy
    does not mention keep their shipped settings; switch one off with ``enabled: false``.
    """
    path = Path(path)
    specs = dict(base)
    if path.is_dir():
        index_file = path / "index.yaml"
        if not index_file.is_file():
            raise RuleConfigError(f"{path}: a rules directory must contain index.yaml")
        where = str(index_file)
        for entry in _index_entries(_read_yaml(index_file.read_text("utf-8"), where), where):
            _unknown_keys(entry, INDEX_KEYS, where, entry["id"])
            specs[entry["id"]] = merge_entry(specs[entry["id"]], entry, where)
            meta_file = path / "metadata" / f"{entry['id']}.yaml"
            if meta_file.is_file():
                metadata = _metadata_document(meta_file.read_text("utf-8"), str(meta_file), entry["id"])
                specs[entry["id"]] = merge_entry(specs[entry["id"]], metadata, str(meta_file))
        return specs
    if not path.is_file():
        raise RuleConfigError(f"{path}: rules file not found")
    where = str(path)
    document = _mapping(_read_yaml(path.read_text("utf-8"), where), where, "a rules file")
    unknown = sorted(str(key) for key in document if key not in ("rules", "ruleMetadata"))
    if unknown:
        raise RuleConfigError(f"{where}: unknown top-level key '{unknown[0]}' (allowed: rules, ruleMetadata)")
    for entry in _index_entries(document, where):
        _unknown_keys(entry, INDEX_KEYS | METADATA_KEYS, where, entry["id"])
        specs[entry["id"]] = merge_entry(specs[entry["id"]], entry, where)
    for rule_id, metadata in _mapping(document.get("ruleMetadata"), where, "ruleMetadata").items():
        _rule_class(rule_id, where)
        metadata = _mapping(metadata, where, f"ruleMetadata.{rule_id}")
        _unknown_keys(metadata, METADATA_KEYS, where, rule_id)
        specs[rule_id] = merge_entry(specs[rule_id], metadata, where)
    return specs


def apply_overrides(
    specs: Mapping[str, RuleSpec], overrides: Mapping[str, Any] | None, where: str = "overrides"
) -> dict[str, RuleSpec]:
    """Settings-style overrides: ``{rule id: {enabled, params, severity, verdictImpact}}``."""
    result = dict(specs)
    for rule_id, entry in _mapping(overrides, where, "overrides").items():
        _rule_class(rule_id, where)
        entry = _mapping(entry, where, f"override of '{rule_id}'")
        _unknown_keys(entry, OVERRIDE_KEYS, where, rule_id)
        result[rule_id] = merge_entry(result[rule_id], entry, where)
    return result
