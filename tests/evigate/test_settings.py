"""Settings: defaults ← YAML ← EVIGATE_* environment ← keyword overrides; bad input names the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.errors import ConfigError
from evigate.settings import DEFAULT_LOCAL_MODEL, load_settings


def test_embedded_defaults_are_offline() -> None:
    settings = load_settings(environ={})
    assert settings.models.for_agent("verifier") == DEFAULT_LOCAL_MODEL
    assert settings.verifier.low_confidence_threshold == 0.5
    assert settings.executor.mode == "plan"
    assert settings.gatekeeper.enabled and settings.composer.enabled


def test_yaml_then_env_then_overrides(tmp_path: Path) -> None:
    path = tmp_path / "evigate.yaml"
    path.write_text(
        "database: a.duckdb\nmodels:\n  default: openai/gpt-4o-mini\n  verifier: ollama_chat/qwen2.5\n"
        "verifier:\n  low_confidence_threshold: 0.4\n",
        encoding="utf-8",
    )
    env = {
        "EVIGATE_VERIFIER__LOW_CONFIDENCE_THRESHOLD": "0.7",
        "EVIGATE_COMPOSER__ENABLED": "false",
        "EVIGATE_DATABASE": "b.duckdb",
        "PATH": "/bin",
    }
    settings = load_settings(path, environ=env, database="c.duckdb")
    assert settings.database == "c.duckdb"
    assert settings.verifier.low_confidence_threshold == 0.7
    assert settings.composer.enabled is False
    assert settings.models.for_agent("planner") == "openai/gpt-4o-mini"
    assert settings.models.for_agent("verifier") == "ollama_chat/qwen2.5"


def test_model_alias_sets_every_agent() -> None:
    settings = load_settings(environ={"EVIGATE_MODEL": "openai/my-vllm-model"})
    assert {settings.models.for_agent(a) for a in ("planner", "executor", "verifier", "composer")} == {
        "openai/my-vllm-model"
    }


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("verifier:\n  low_confidence_threshhold: 0.4\n", "low_confidence_threshhold"),
        ("verifier:\n  low_confidence_threshold: 3\n", "low_confidence_threshold"),
        ("executor:\n  mode: magic\n", "executor.mode"),
        ("- a\n- b\n", "mapping"),
        ("a: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_settings_name_the_file_and_key(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, environ={})
    assert needle in str(info.value) and "bad.yaml" in str(info.value)


def test_missing_file_and_bad_env_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.yaml", environ={})
    with pytest.raises(ConfigError, match="EVIGATE_"):
        load_settings(environ={"EVIGATE_VERIFIER__LOW_CONFIDENCE_THRESHOLD": "high"})


def test_a_partial_mapping_changes_only_the_keys_it_names(tmp_path) -> None:
    from evigate.settings import DEFAULT_LOCAL_FIELD_LIMITS, load_settings

    path = tmp_path / "evigate.yaml"
    path.write_text("models:\n  local_field_limits: {claims: 4}\n  agent_max_tokens: {executor: 800}\n")
    models = load_settings(path, environ={}).models
    assert models.local_field_limits == {**DEFAULT_LOCAL_FIELD_LIMITS, "claims": 4}
    assert models.max_tokens_for("executor") == 800 and models.max_tokens_for("verifier") == 900
    env = {"EVIGATE_MODELS__LOCAL_FIELD_LIMITS": "{evidence_excerpt: 120}"}
    assert load_settings(environ=env).models.local_field_limits["evidence_excerpt"] == 120
    assert load_settings(environ=env).models.local_field_limits["claims"] == DEFAULT_LOCAL_FIELD_LIMITS["claims"]


@pytest.mark.parametrize(
    "name",
    ["EVIGATE_DEBUG", "EVIGATE_HOLMESGPT_CASES", "EVIGATE_API_TOKEN", "EVIGATE_MODEL_CACHE", "EVIGATE_SOMETHING_NEW"],
)
def test_variables_of_other_parts_of_evigate_are_not_settings(name: str) -> None:
    """The CLI tells users to rerun with EVIGATE_DEBUG=1: that must not make the settings invalid."""
    settings = load_settings(environ={name: "1", "EVIGATE_VERIFIER__LOW_CONFIDENCE_THRESHOLD": "0.7"})
    assert settings.verifier.low_confidence_threshold == 0.7


def test_declared_mapping_fields_take_keys_below_them() -> None:
    env = {"EVIGATE_GATEKEEPER__OVERRIDES__EVIDENCE.EXCERPT_SIMILARITY__ENABLED": "false"}
    assert load_settings(environ=env).gatekeeper.overrides == {"evidence.excerpt_similarity": {"enabled": False}}


def test_the_default_local_model_has_one_source() -> None:
    from evigate.llm.models import DEFAULT_LOCAL_MODEL as engine_default
    from evigate.llm.models import LOCAL_PREFIX

    assert load_settings(environ={}).models.default == f"{LOCAL_PREFIX}/{engine_default}"
