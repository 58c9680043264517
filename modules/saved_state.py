"""Saved agent states are untrusted files: digests from the manifest, then only prompts and demos are loaded.

A DSPy state file may carry an ``lm`` (DSPy keeps its model and drops only the endpoint, so a planted file would
swap the configured model for another) and any attribute name, which ``Predict.load_state`` sets on the module.
Loading therefore (1) checks the file's SHA-256 against ``manifest.json`` of its directory, which
``DiagnosisProgram.save`` and the optimize jobs write, and (2) keeps only the keys a compiled prompt consists of.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evigate.errors import ConfigError

MANIFEST = "manifest.json"
# What a compiled predictor consists of: instructions + field descriptions (signature), demos, and the traces /
# train lists DSPy writes empty. Everything else — ``lm`` first of all — is dropped.
PREDICTOR_KEYS = ("signature", "demos", "traces", "train", "fields")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    return _read_object(path, "program manifest") if path.is_file() else {}


def _read_object(path: Path, what: str) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} is not a readable {what}: {exc}") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} is not a {what} (not a JSON object)")
    return loaded


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")


def write_program_manifest(directory: Path, agents: Sequence[str], **facts: Any) -> dict[str, Any]:
    """Write the manifest of a program directory holding ``<agent>.json`` for each of ``agents``: its digests (what
    :func:`load_agent_state` checks) and ``facts`` (model, run id, command, figures …); return the manifest."""
    manifest = {
        **facts,
        "evigate_program": 1,
        "agents": list(agents),
        "files": {f"{agent}.json": sha256_of(directory / f"{agent}.json") for agent in agents},
    }
    write_manifest(directory, manifest)
    return manifest


def record_state_file(state_file: str | Path) -> None:
    """Record ``state_file``'s digest in its directory's manifest (after an optimizer saved one agent)."""
    path = Path(state_file)
    manifest = read_manifest(path.parent) or {"evigate_program": 1}
    manifest.setdefault("files", {})[path.name] = sha256_of(path)
    agents = manifest.setdefault("agents", [])
    if path.stem not in agents:
        agents.append(path.stem)
    write_manifest(path.parent, manifest)


def load_agent_state(module: Any, state_file: Path, agent: str) -> None:
    """Load ``state_file`` into ``module`` after checking its digest; only prompt and demo keys are applied."""
    expected = (read_manifest(state_file.parent).get("files") or {}).get(state_file.name)
    if not isinstance(expected, str):
        raise ConfigError(
            f"{state_file} is not recorded in {state_file.parent / MANIFEST}; a state file is loaded only with the "
            f"digest its save wrote: save the program again (program.save / evigate optimize), or remove the file"
        )
    actual = sha256_of(state_file)
    if actual != expected:
        raise ConfigError(
            f"{state_file} does not match the digest in {state_file.parent / MANIFEST} (sha256 {actual[:12]}… "
            f"≠ {expected[:12]}…): the file was changed after it was saved; refusing to load it"
        )
    state = _read_object(state_file, "agent state")
    clean = {}
    for name, _ in module.named_parameters():
        saved = state.get(name)
        if not isinstance(saved, dict) or "signature" not in saved:
            raise ConfigError(
                f"{state_file} does not fit the {agent} agent being loaded (no state for its predictor {name!r}); "
                f"it was saved from a different {agent} module: load it into that module, or remove the file"
            )
        clean[name] = {key: saved[key] for key in PREDICTOR_KEYS if key in saved} | {"lm": None}
    try:
        module.load_state(clean)
    except (KeyError, ValueError, TypeError, AttributeError) as exc:  # DSPy reports a misfit state this way
        raise ConfigError(
            f"{state_file} does not fit the {agent} agent being loaded ({type(exc).__name__}: {exc}); it was "
            f"saved from a different {agent} module: load it into that module, or remove the file"
        ) from exc
