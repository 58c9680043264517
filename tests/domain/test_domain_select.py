"""Selecting a domain: settings key / EVIGATE_DOMAIN, from_settings(domain=), an injected Domain object."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from evigate.demo import demo_domain
from evigate.domain import Domain, Skill, SkillStep, Vocabulary, load_domain
from evigate.errors import ConfigError
from evigate.modules.program import DiagnosisProgram
from evigate.settings import load_settings
from evigate.store import AuditStore


def test_the_demo_is_the_default_and_env_selects_another(starter: Path) -> None:
    assert load_settings(environ={}).domain == "demo"
    assert load_settings(environ={"EVIGATE_DOMAIN": str(starter)}).domain == str(starter)
    assert load_domain(None).name == "demo" and load_domain(str(starter)).name == "acme-shop"


def test_unknown_domains_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"domain\.yaml: not found"):
        load_domain(str(tmp_path))
    with pytest.raises(ConfigError, match="cannot be loaded"):
        load_domain("no_such_package.anywhere:domain")


def test_an_injected_domain_object(tmp_path: Path) -> None:
    domain = Domain(
        name="tiny", vocabulary=Vocabulary(services=["edge-proxy"], error_codes=["UPSTREAM_RESET"]),
        knowledge=[], skills=[Skill(id="look", name="look", description="time", when_to_use="always",
                                    steps=[SkillStep(tool="get_current_datetime")])],
    )
    program = DiagnosisProgram.from_settings(database=tmp_path / "t.duckdb", domain=domain)
    assert program.domain is domain and program.settings.domain == "object:tiny"
    assert program.registry.names() == ["get_current_datetime"]
    assert program.fallback_planner.fallback("edge-proxy UPSTREAM_RESET").skill == "look"
    program.store.close()


def test_the_demo_world_is_built_only_when_selected(tmp_path: Path, starter: Path) -> None:
    DiagnosisProgram.from_settings(database=tmp_path / "acme.duckdb", domain=starter).store.close()
    DiagnosisProgram.from_settings(database=tmp_path / "demo.duckdb").store.close()
    for name, expected in (("acme.duckdb", False), ("demo.duckdb", True)):
        with duckdb.connect(str(tmp_path / name), read_only=True) as connection:
            rows = connection.execute("SELECT table_name FROM information_schema.tables").fetchall()
        tables = {row[0] for row in rows}
        assert ("world_logs" in tables) is expected, name


def test_an_explicit_data_path_keeps_the_world_in_a_duckdb_file_of_its_own(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.duckdb") as store:
        domain = demo_domain()
        domain.data_path = str(tmp_path / "world.duckdb")
        source = domain.data_source(store, database="postgresql://evigate@127.0.0.1/evigate")
        with source.cursor() as cursor:
            assert cursor.execute("SELECT count(*) FROM world_orders WHERE order_id = 123").fetchone() == (1,)
        with store.cursor() as cursor:
            tables = {row[0] for row in cursor.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        assert "world_orders" not in tables
    assert (tmp_path / "world.duckdb").is_file()


def test_a_bare_clock_time_in_a_demo_question_falls_on_the_world_day() -> None:
    # Before: the demo domain read "around 02:10" on the real date, so every window missed the world (no rows).
    entities = demo_domain().extract_entities("Why was settlement-service slow (SLOW_SQL) around 02:10?")
    assert entities["times"] == ["2026-11-28 02:10"]
    assert entities["time_window"] == "2026-11-28 01:55/2026-11-28 02:25"
