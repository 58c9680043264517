"""Skills load from YAML, name only real tools, and render into plan steps the tools accept."""

from __future__ import annotations

import pytest

from evigate.demo import Skill, demo_registry, extract_query_entities, load_skills, template_values
from evigate.errors import ConfigError

QUERIES = [
    "订单 123 支付失败，ERR_TIMEOUT 是什么原因？",
    "payment-service 09:30 左右 HikariCP 连接池满了，ERR_DB_POOL_EXHAUSTED",
    "ERR_DEADLOCK 是什么意思？订单 789 下单失败",
    "16:35 网关大量 429，risk-service 变慢",
    "20:00 redis 命中率掉到 18%，商品详情很慢",
    "为什么凌晨 02:20 SLOW_SQL 这么多",
    "用户说 06:20 没收到短信",
    "ERR_SIGN_INVALID 怎么处理",
    "没有实体的泛泛问题",
]


@pytest.fixture(scope="module")
def skills() -> list[Skill]:
    return load_skills()


def test_shipped_skills(skills) -> None:
    assert len(skills) >= 6
    ids = [skill.id for skill in skills]
    assert ids == sorted(set(ids))
    assert {"payment-timeout", "db-pool-exhaustion", "slow-sql", "inventory-deadlock", "retry-storm",
            "cache-avalanche"} <= set(ids)
    tools = set(demo_registry().names())
    for skill in skills:
        assert skill.name and skill.description and skill.when_to_use
        assert {step.tool for step in skill.steps} <= tools, skill.id


@pytest.mark.parametrize("query", QUERIES)
def test_rendered_steps_are_valid_tool_calls(skills, query: str) -> None:
    registry = demo_registry()
    values = template_values(extract_query_entities(query), query)
    for skill in skills:
        for step in skill.render(values):
            registry.get(step.tool).Args.model_validate(step.args)  # raises if a template produced a bad call
            assert not any("{" in str(value) for value in step.args.values()), (skill.id, step)


def test_render_fills_drops_and_skips() -> None:
    skill = Skill.model_validate({
        "id": "t", "name": "t", "description": "d", "when_to_use": "w",
        "steps": [
            {"tool": "query_order", "args": {"order_id": "{order_id}"}, "requires": ["order_id"]},
            {"tool": "query_metrics", "args": {"service": "{service|pay-gateway}", "metric": "latency_p99",
                                               "time_window": "{time_window}"}},
            {"tool": "lookup_knowledge", "args": {"query": "{error_code} 是什么"}},
        ],
    })
    with_order = skill.render({"order_id": 123, "error_code": "ERR_TIMEOUT"})
    assert with_order[0].args == {"order_id": 123}  # a lone placeholder keeps the int
    assert with_order[1].args == {"service": "pay-gateway", "metric": "latency_p99"}  # default used, window dropped
    assert with_order[2].args == {"query": "ERR_TIMEOUT 是什么"}
    bare = skill.render({})
    assert [step.tool for step in bare] == ["query_metrics", "lookup_knowledge"]
    assert bare[1].args == {}


def test_payment_timeout_plan_for_the_demo_query(skills) -> None:
    query = QUERIES[0]
    plan = next(s for s in skills if s.id == "payment-timeout").render(
        template_values(extract_query_entities(query), query))
    assert plan[0].tool == "query_order" and plan[0].args == {"order_id": 123}
    assert any(step.tool == "lookup_knowledge" and "ERR_TIMEOUT" in step.args["query"] for step in plan)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id: x\nname: x\ndescription: d\nwhen_to_use: w\nsteps: []\n", "invalid skill"),
        ("id: x\n  bad: [yaml\n", "invalid skill"),
        ("id: x\nname: x\ndescription: d\nwhen_to_use: w\nsteps:\n  - tool: query_logs\n    args: {service: '{svc}'}\n",
         "unknown placeholders"),
    ],
)
def test_bad_skill_files_are_config_errors(tmp_path, content: str, message: str) -> None:
    (tmp_path / "bad.yaml").write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_skills(tmp_path)


def test_duplicate_ids_and_missing_folder(tmp_path) -> None:
    body = "id: same\nname: x\ndescription: d\nwhen_to_use: w\nsteps:\n  - tool: get_current_datetime\n"
    (tmp_path / "a.yaml").write_text(body, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match="duplicate"):
        load_skills(tmp_path)
    with pytest.raises(ConfigError, match="not found"):
        load_skills(tmp_path / "nowhere")
