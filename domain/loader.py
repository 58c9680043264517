"""Find and load a domain: a directory (`domain.yaml`, `skills/*.yaml`, `knowledge/**/*.md`) or a named plug-in.

`load_domain(None)` and `load_domain("demo")` give the built-in demo world; `"package.module:attribute"` loads a
Domain object (or a function returning one) from an installed package; anything else is a directory. Built-in
domains are plug-ins resolved by that same dotted path at run time, so no generic layer imports them.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evigate.domain.model import Domain
from evigate.domain.skills import load_skills
from evigate.errors import ConfigError
from evigate.files import read_yaml_bounded

DOMAIN_FILE = "domain.yaml"
DEFAULT_DOMAIN = "demo"
BUILTIN_DOMAINS: dict[str, str] = {"demo": "evigate.demo.domain:demo_domain"}
"""Names usable as `domain:` besides a directory or a dotted path."""


def load_domain(ref: Domain | str | Path | None = None) -> Domain:
    """The Domain that `ref` names (see the module docstring); a Domain object is returned as it is."""
    if isinstance(ref, Domain):
        return ref
    text = str(ref) if ref is not None else DEFAULT_DOMAIN
    if text in BUILTIN_DOMAINS:
        return _plugin(BUILTIN_DOMAINS[text])
    if ":" in text and not Path(text).exists() and "/" not in text.split(":", 1)[0]:
        return _plugin(text)
    return load_domain_dir(text)


@lru_cache(maxsize=16)
def _plugin(path: str) -> Domain:
    module_name, _, attribute = path.partition(":")
    try:
        found: Any = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"domain {path!r} cannot be loaded: {exc}") from None
    domain = found() if callable(found) and not isinstance(found, Domain) else found
    if not isinstance(domain, Domain):
        raise ConfigError(f"domain {path!r} is a {type(domain).__name__}, not an evigate Domain")
    return domain


def _where(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def format_validation(file: str, exc: ValidationError) -> str:
    """'domain.yaml: sources.metrics.url: Field required; …' — file, key path and message of every problem."""
    problems = []
    for error in exc.errors(include_url=False):
        where = _where(tuple(p for p in error["loc"] if not str(p).startswith("function-")))
        message = error["msg"].removeprefix("Value error, ")
        problems.append(f"{file}: {where + ': ' if where else ''}{message}")
    return "; ".join(problems)


def load_domain_dir(directory: str | Path) -> Domain:
    """Read and validate a domain directory; ConfigError naming the file and key of any problem."""
    root = Path(directory).expanduser()
    config = root / DOMAIN_FILE
    if not config.exists():  # present but a FIFO or a device: the bounded reader says what it is
        raise ConfigError(f"{config}: not found (a domain directory holds {DOMAIN_FILE}; `evigate domain init DIR` "
                          "writes a starter one)")
    data = read_yaml_bounded(config, what="domain file") or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{config}: must hold a mapping at the top level")
    data.setdefault("knowledge", ["knowledge"])
    try:
        domain = Domain.model_validate({**data, "base_dir": root.resolve()})
    except ValidationError as exc:
        raise ConfigError(format_validation(str(config), exc)) from None
    except ConfigError as exc:  # a connector's model, with the key in its message
        raise ConfigError(f"{config}: {exc}") from None
    skills_dir = root / "skills"
    if skills_dir.is_dir():
        found = load_skills(skills_dir, domain.vocabulary.placeholders())
        known = {skill.id for skill in domain.skills}
        clash = sorted(known & {skill.id for skill in found})
        if clash:
            raise ConfigError(f"{skills_dir}: skill ids {clash} are also defined in {config}")
        domain = domain.model_copy(update={"skills": [*domain.skills, *found]})
    if not domain.skills:
        raise ConfigError(f"{config}: skills: a domain needs at least one skill (skills/*.yaml or `skills:`)")
    try:
        registry = domain.build_registry()  # a tool its source cannot serve is a config error now, not mid-question
    except ConfigError as exc:
        raise ConfigError(f"{config}: {exc}") from None
    problems = [
        f"{skills_dir}/{skill.id}.yaml: steps[{index}].tool: unknown tool {step.tool!r}; the domain's tools: "
        f"{', '.join(registry.names())}"
        for skill in domain.skills for index, step in enumerate(skill.steps) if step.tool not in registry
    ]
    if problems:
        raise ConfigError("; ".join(problems))
    return domain
