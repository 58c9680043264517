"""`models.api_key` is a secret: the LM gets it; no settings dump, session snapshot, `show --json` or log does."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from evigate.settings import load_settings
from tests.evigate.test_cli import run_cli
from tests.modules.scripted import ScriptedVerifier
from tests.modules.test_program_routing import QUERY, build

SECRET = "sk-live-0123456789abcdef"


def test_the_key_is_kept_for_the_lm_and_hidden_everywhere_else() -> None:
    settings = load_settings(environ={"EVIGATE_MODELS__API_KEY": SECRET, "EVIGATE_MODEL": "openai/qwen"})
    assert settings.models.api_key is not None and settings.models.api_key.get_secret_value() == SECRET
    dumped = json.dumps(settings.model_dump(mode="json"))
    for text in (repr(settings), str(settings), settings.model_dump_json(), dumped):
        assert SECRET not in text
    assert "api_key" not in settings.model_dump(mode="json")["models"]


def test_a_numeric_key_from_the_environment_stays_text() -> None:
    settings = load_settings(environ={"EVIGATE_MODELS__API_KEY": "12345"})
    assert settings.models.api_key is not None and settings.models.api_key.get_secret_value() == "12345"


def test_no_session_snapshot_show_json_or_log_line_holds_the_key(
    private_world: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("EVIGATE_MODELS__API_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    program = build(private_world, verifier=ScriptedVerifier({"claim-1": "direct_observation"}))
    result = program(query=QUERY)
    snapshot = program.store.session(result.session_id)["settings"]
    assert snapshot["models"]["default"] == program.settings.models.default  # the snapshot is still there
    assert SECRET not in json.dumps(snapshot, default=str)
    program.store.close()
    shown = run_cli("show", result.session_id, "--json", database=private_world)
    assert shown.returncode == 0, shown.stderr
    assert SECRET not in shown.stdout + shown.stderr
    assert SECRET not in caplog.text
    assert SECRET.encode() not in private_world.read_bytes()


def test_show_never_prints_a_key_an_older_session_recorded(private_world: Path) -> None:
    from evigate.store import AuditStore

    with AuditStore(private_world) as store:
        session_id = store.start_session(QUERY, settings={"models": {"default": "openai/qwen", "api_key": SECRET}})
    for args in (("show", session_id, "--json"), ("show", session_id)):
        shown = run_cli(*args, database=private_world)
        assert shown.returncode == 0, shown.stderr
        assert SECRET not in shown.stdout + shown.stderr
