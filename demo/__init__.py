"""The demo incident world, the default Domain: a payment platform's day (2026-11-28) with seven incidents
woven into normal traffic.

`build_world(cursor, seed=…)` writes the `world_*` tables (orders, payment attempts, logs, minute metrics,
thresholds, incident ground truth) into DuckDB; `ensure_world(store)` builds them on first use. The knowledge
base (Chinese runbooks and error-code documents, `knowledge/<area>/<name>.md`) and the skills the Planner picks
from (`skills/*.yaml`) ship with the package. Same seed → identical world.

    >>> import duckdb
    >>> from evigate.demo import build_world, extract_query_entities
    >>> counts = build_world(duckdb.connect().cursor(), scale=0.05)
    >>> extract_query_entities("订单 123 支付失败，ERR_TIMEOUT 是什么原因？")["order_ids"]
    [123]
"""

from __future__ import annotations

from evigate.demo.builder import (
    WORLD_TABLES,
    build_world,
    ensure_world,
    world_fingerprint,
    world_info,
    world_stats,
)
from evigate.demo.catalog import (
    DEFAULT_SEED,
    ERROR_CODES,
    GENERATOR_VERSION,
    INCIDENTS,
    INJECTION_ORDER_ID,
    INJECTION_TEXTS,
    INJECTION_TRACE_ID,
    SERVICES,
    SQL_LOOKING_TEXTS,
    WORLD_NOW,
    Incident,
)
from evigate.demo.domain import (
    DemoDomain,
    demo_domain,
    demo_registry,
    demo_source,
    demo_toolbox,
    knowledge_dir,
    load_skills,
)
from evigate.demo.entities import DEMO_VOCABULARY, extract_query_entities
from evigate.domain.skills import Skill, SkillStep, template_values

__all__ = [
    "DEFAULT_SEED",
    "DEMO_VOCABULARY",
    "ERROR_CODES",
    "GENERATOR_VERSION",
    "INCIDENTS",
    "INJECTION_ORDER_ID",
    "INJECTION_TEXTS",
    "INJECTION_TRACE_ID",
    "SERVICES",
    "SQL_LOOKING_TEXTS",
    "WORLD_NOW",
    "WORLD_TABLES",
    "DemoDomain",
    "Incident",
    "Skill",
    "SkillStep",
    "build_world",
    "demo_domain",
    "demo_registry",
    "demo_source",
    "demo_toolbox",
    "ensure_world",
    "extract_query_entities",
    "knowledge_dir",
    "load_skills",
    "template_values",
    "world_fingerprint",
    "world_info",
    "world_stats",
]
