"""Settings: embedded defaults, an optional YAML file, then `EVIGATE_*` environment variables (highest wins).

Environment variables address any key by its path joined with a double underscore, e.g.
``EVIGATE_VERIFIER__LOW_CONFIDENCE_THRESHOLD=0.6`` or ``EVIGATE_MODELS__VERIFIER=openai/gpt-4o-mini``.
Short aliases exist for the common ones: ``EVIGATE_DATABASE``, ``EVIGATE_MODEL`` (every agent's default model),
``EVIGATE_LOCALE``, ``EVIGATE_EXECUTOR_MODE``, ``EVIGATE_PROGRAM_DIR``; ``EVIGATE_COMPILED_PROGRAM=false`` turns the
shipped compiled program off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, ValidationInfo, field_validator

from evigate.errors import ConfigError
from evigate.files import read_yaml_bounded
from evigate.llm.models import DEFAULT_LOCAL_MODEL as _LOCAL_MODEL_NAME
from evigate.llm.models import LOCAL_PREFIX
from evigate.rules import contract as field

DEFAULT_LOCAL_MODEL = f"{LOCAL_PREFIX}/{_LOCAL_MODEL_NAME}"
ENV_PREFIX = "EVIGATE_"
ENV_ALIASES = {
    "EVIGATE_DATABASE": ("database",),
    "EVIGATE_MODEL": ("models", "default"),
    "EVIGATE_LOCALE": ("locale",),
    "EVIGATE_EXECUTOR_MODE": ("executor", "mode"),
    "EVIGATE_PROGRAM_DIR": ("program_dir",),
}

AgentName = Literal["planner", "executor", "verifier", "composer"]
AGENTS: tuple[AgentName, ...] = ("planner", "executor", "verifier", "composer")


DEFAULT_AGENT_MAX_TOKENS = {"planner": 320, "executor": 1200, "verifier": 900, "composer": 700}
DEFAULT_LOCAL_BOUNDS = {"max_string_length": 240, "max_array_items": 5}
# Decoding time is roughly linear in the tokens a model writes, and the 0.5B default fills every list to its limit
# (measured: 1,197 executor tokens, ~240 s, truncated). These fields carry the content; each gets just enough room
# for what a diagnosis needs. Keys are JSON property names wherever they occur (`name[]`: the items of a list).
DEFAULT_LOCAL_FIELD_LIMITS = {
    field.CLAIMS: 2,
    field.CLAIM_ID: 12,
    field.BINDINGS: 1,
    field.TOOL_NAME: 24,
    field.INVOCATION_IDS: 2,
    field.CLAIM_TEXT: 80,
    field.EXCERPT: 80,
    field.HYPOTHESES: 1,
    field.HYPOTHESIS_TEXT: 48,
    field.BASIS: 48,
    field.NEEDED_EVIDENCE: 1,
    f"{field.NEEDED_EVIDENCE}[]": 40,
    field.ACTIONS: 1,
    field.ACTION_TEXT: 48,
    field.REASON: 48,
    field.MISSING_INFO: 1,
    f"{field.MISSING_INFO}[]": 60,
    "detail": 30,
    "rationale": 60,
    "claim_checks": 4,
    "hypothesis_checks": 2,
    "answer_summary": 100,
    "user_facing_answer": 200,
}
_MAPPING_DEFAULTS = {
    "agent_max_tokens": DEFAULT_AGENT_MAX_TOKENS,
    "local_bounds": DEFAULT_LOCAL_BOUNDS,
    "local_field_limits": DEFAULT_LOCAL_FIELD_LIMITS,
}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ModelSettings(_Section):
    """Which language model each agent uses: any DSPy/litellm model string, or ``local/<name>`` for llama.cpp."""

    default: str = DEFAULT_LOCAL_MODEL
    planner: str | None = None
    executor: str | None = None
    verifier: str | None = None
    composer: str | None = None
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=1200, ge=16, description="completion budget of an agent not listed below")
    agent_max_tokens: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_AGENT_MAX_TOKENS),
        description="per-agent completion budgets: a small model that loops stops here instead of running on",
    )
    api_base: str | None = Field(default=None, description="e.g. a vLLM or Ollama server URL")
    # A secret: masked in repr and logs, and left out of every dump (session settings snapshots, `show --json`).
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    num_retries: int = Field(default=1, ge=0, le=10, description="retries of a failed call to a model server")

    local_bounds: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_LOCAL_BOUNDS),
        description="JSON-schema limits the embedded model decodes under (small models loop on unbounded fields)",
    )
    local_field_limits: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_LOCAL_FIELD_LIMITS),
        description="per-property maxItems/maxLength for the embedded model (tighter than local_bounds)",
    )
    local_omit_fields: list[str] = Field(
        default_factory=lambda: [
            field.SOURCE_TYPE, field.SOURCE_ID, "evidence_refs", f"RecommendedAction.{field.BINDINGS}"
        ],
        description="optional properties the embedded model does not write (code fills or ignores them)",
    )

    @field_validator("agent_max_tokens", "local_bounds", "local_field_limits", mode="before")
    @classmethod
    def _over_the_defaults(cls, value: Any, info: ValidationInfo) -> Any:
        """A mapping given in YAML or the environment changes the keys it names; the other defaults stay."""
        if not isinstance(value, Mapping):
            return value
        return {**_MAPPING_DEFAULTS[info.field_name or ""], **value}

    @field_validator("api_key", mode="before")
    @classmethod
    def _key_as_text(cls, value: Any) -> Any:
        """An environment value is parsed as YAML, so a numeric key would arrive as a number."""
        return value if value is None or isinstance(value, SecretStr) else str(value)

    def for_agent(self, agent: AgentName) -> str:
        return getattr(self, agent) or self.default

    def max_tokens_for(self, agent: AgentName) -> int:
        return self.agent_max_tokens.get(agent, self.max_tokens)


class ExecutorSettings(_Section):
    mode: Literal["plan", "react"] = "plan"
    max_iters: int = Field(default=6, ge=1, le=20)
    max_evidence_chars: int = Field(default=500, ge=200, description="per tool output shown to the executor model")
    local_max_evidence_chars: int = Field(
        default=360, ge=200, description="the same when the executor runs on the embedded local model"
    )


class VerifierSettings(_Section):
    low_confidence_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    max_trace_entries: int = Field(
        default=12, ge=1, description="tool-trace entries the verifier model reads (V1 truncation priority)"
    )
    # Prompt evaluation is most of a local round (~110 tok/s on 2 cores at these context lengths, ~170 tokens per
    # entry): the entries the claims cite come first, uncited auxiliary ones are what V1 allows to be cut.
    local_max_trace_entries: int = Field(
        default=3, ge=1, description="the same when the verifier runs on the embedded local model"
    )


class GatekeeperSettings(_Section):
    enabled: bool = True
    rules_file: str | None = Field(default=None, description="a user's copy of the rule index YAML")
    overrides: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="rule id -> {enabled, params}; thresholds without editing code"
    )


class ComposerSettings(_Section):
    enabled: bool = True


class TimeoutSettings(_Section):
    agent_seconds: float = Field(default=300.0, gt=0, description="an agent slower than this degrades the answer")


class Settings(_Section):
    """Everything a DiagnosisProgram needs; every field has an offline-safe default."""

    database: str = "evigate.duckdb"
    domain: str = Field(
        default="demo",
        description="the incident domain: 'demo' (the built-in demo world), a directory holding domain.yaml, or "
        "'package.module:attribute'",
    )
    locale: Literal["zh", "en"] = "zh"
    program_dir: str = Field(
        default="artifacts/program",
        description="a compiled program directory; loaded only when configured (YAML, env or override), so a "
        "directory planted at the relative default never changes what runs",
    )
    compiled_program: bool = Field(
        default=True,
        description="load the program shipped compiled for the embedded model (agents whose model it was compiled "
        "for); a configured program_dir wins over it",
    )
    models: ModelSettings = Field(default_factory=ModelSettings)
    executor: ExecutorSettings = Field(default_factory=ExecutorSettings)
    verifier: VerifierSettings = Field(default_factory=VerifierSettings)
    gatekeeper: GatekeeperSettings = Field(default_factory=GatekeeperSettings)
    composer: ComposerSettings = Field(default_factory=ComposerSettings)
    timeouts: TimeoutSettings = Field(default_factory=TimeoutSettings)


def load_settings(
    settings_file: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Merge defaults ← YAML file ← environment ← keyword overrides (top-level keys) into validated Settings."""
    environ = os.environ if environ is None else environ
    settings_file = settings_file or environ.get("EVIGATE_SETTINGS")
    data: dict[str, Any] = {}
    source = "defaults"
    if settings_file:
        source = str(settings_file)
        data = _read_yaml(Path(settings_file))
    for path, value in _env_entries(environ):
        _set_path(data, path, value)
    for key, value in overrides.items():
        if value is not None:
            data[key] = value
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors(include_url=False)
        )
        raise ConfigError(f"invalid settings ({source} + EVIGATE_* environment): {problems}") from None


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise ConfigError(f"settings file not found: {path}")
    loaded = read_yaml_bounded(path, what="settings file")  # a FIFO or /dev/zero is refused, not read forever
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"settings file {path} must hold a mapping at the top level")
    return loaded


def _env_entries(environ: Mapping[str, str]) -> list[tuple[tuple[str, ...], Any]]:
    entries: list[tuple[tuple[str, ...], Any]] = []
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX):
            continue
        path = ENV_ALIASES.get(name) or tuple(part.lower() for part in name[len(ENV_PREFIX) :].split("__"))
        # Declared fields only (pydantic-settings' rule): EVIGATE_DEBUG, EVIGATE_API_TOKEN, EVIGATE_MODEL_CACHE …
        # belong to other parts of evigate and are read there, so no list of exceptions has to be kept here.
        if not _declared(Settings, path):
            continue
        # YAML scalars give env values their natural types: "0.6" → 0.6, "false" → False.
        try:
            entries.append((path, yaml.safe_load(raw) if raw.strip() else raw))
        except yaml.YAMLError as exc:  # the value itself is never echoed: it may be a secret
            where = getattr(getattr(exc, "problem_mark", None), "column", None)
            at = f" (column {where + 1})" if where is not None else ""
            raise ConfigError(
                f"environment variable {name} is not a valid YAML value{at}: quote it, e.g. {name}='\"...\"'"
            ) from None
    return entries


def _declared(model: type[BaseModel], path: tuple[str, ...]) -> bool:
    """Whether `path` names a field of `model`: a section is walked into; a mapping field takes any key below it."""
    field = model.model_fields.get(path[0]) if path else None
    if field is None:
        return False
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return len(path) == 1 or _declared(annotation, path[1:])
    return len(path) == 1 or get_origin(annotation) is dict


def _set_path(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value
