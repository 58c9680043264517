"""Which compiled program a DiagnosisProgram runs, and loading it into the agents evigate built itself.

Three sources, first match wins:

1. a ``program_dir`` the user *configured* (settings YAML, ``EVIGATE_PROGRAM_DIR`` or an override): its state files
   are loaded whatever model they were compiled for — the user chose them. A configured directory that does not
   exist is a ConfigError (a typo must not silently run other prompts). The embedded default ``artifacts/program``
   is never looked up: a directory planted in the working directory must not change what runs;
2. the program shipped compiled for the embedded model (package data, :data:`SHIPPED_PROGRAM_DIR`), unless the
   ``compiled_program`` setting is off. An agent gets it only when the model it runs with is the one the manifest
   was compiled for (demos written for a 0.5B model are not another model's prompt);
3. the built-in prompts.

Injected agents never receive saved state: they are the caller's, not evigate's. Every state file goes through
:func:`evigate.modules.saved_state.load_agent_state` (digest from the manifest, then prompts and demos only); a
shipped file that fails that check is refused loudly, never half-loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evigate.errors import ConfigError
from evigate.modules.saved_state import MANIFEST, load_agent_state, read_manifest
from evigate.settings import AGENTS, Settings

SHIPPED_PROGRAM_DIR = Path(__file__).resolve().parent / "compiled"
"""The program compiled for the embedded model, shipped in the wheel (``evigate/modules/compiled/``)."""

ProgramSource = Literal["configured", "shipped", "built-in"]


@dataclass
class ProgramChoice:
    """Which program answers: its source and directory, the agents that loaded it and why the others did not."""

    source: ProgramSource
    directory: Path | None = None
    compiled: list[str] = field(default_factory=list)
    builtin: dict[str, str] = field(default_factory=dict)
    """agent → why it runs its built-in prompts."""
    manifest: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """What the audit keeps of it (JSON)."""
        return {
            "source": self.source,
            "directory": str(self.directory) if self.directory else None,
            "compiled_agents": list(self.compiled),
            "builtin_agents": dict(self.builtin),
            "model": self.manifest.get("model"),
            "mlflow_run_id": self.manifest.get("mlflow_run_id"),
        }


def choose_program(settings: Settings) -> ProgramChoice:
    """The program directory ``settings`` select (see the module docstring); nothing is loaded yet."""
    if "program_dir" in settings.model_fields_set:
        directory = Path(settings.program_dir)
        if not directory.is_dir():
            raise ConfigError(
                f"no saved program at {directory} (program_dir is configured: settings file, EVIGATE_PROGRAM_DIR or "
                f"an override): write one with `evigate optimize …--program-dir {directory}`, or unset program_dir"
            )
        return ProgramChoice("configured", directory)
    if not settings.compiled_program:
        return ProgramChoice("built-in", builtin=dict.fromkeys(AGENTS, "compiled_program is off"))
    if not (SHIPPED_PROGRAM_DIR / MANIFEST).is_file():
        return ProgramChoice("built-in", builtin=dict.fromkeys(AGENTS, f"no shipped program in {SHIPPED_PROGRAM_DIR}"))
    return ProgramChoice("shipped", SHIPPED_PROGRAM_DIR)


def load_choice(choice: ProgramChoice, modules: dict[str, Any], injected: Collection[str],
                model_of: Callable[[str], str], executor_mode: str) -> ProgramChoice:
    """Load ``choice``'s state files into ``modules`` (agent → module), skipping ``injected`` agents and — for the
    shipped program — agents whose model (``model_of``) or executor mode is not the one it was compiled for."""
    if choice.directory is None:
        return choice
    directory = choice.directory
    choice.manifest = read_manifest(directory)
    for agent in AGENTS:
        state_file = directory / f"{agent}.json"
        why = _why_not(choice, agent, state_file.is_file(), agent in injected, model_of(agent), executor_mode)
        if why:
            choice.builtin[agent] = why
            continue
        try:
            load_agent_state(modules[agent], state_file, agent)
        except ConfigError as exc:
            if choice.source != "shipped":
                raise
            raise ConfigError(f"the shipped compiled program is damaged: {exc}. Reinstall evigate, or run the "
                              f"built-in prompts with EVIGATE_COMPILED_PROGRAM=false") from exc
        choice.compiled.append(agent)
    return choice


def _why_not(choice: ProgramChoice, agent: str, has_file: bool, injected: bool, model: str,
             executor_mode: str) -> str:
    """Why ``agent`` keeps its built-in prompts ("" when its state file is to be loaded)."""
    if not has_file:
        return "not compiled" if choice.source == "shipped" else f"no {agent}.json in the program directory"
    if injected:
        return "injected agent (its own prompts)"
    if choice.source != "shipped":
        return ""
    compiled_for = choice.manifest.get("model")
    if model != compiled_for:
        return f"compiled for {compiled_for}, runs {model}"
    saved_mode = choice.manifest.get("executor_mode")
    if agent == "executor" and saved_mode and saved_mode != executor_mode:
        return f"compiled for executor mode {saved_mode}, runs {executor_mode}"
    return ""
