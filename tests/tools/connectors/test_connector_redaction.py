"""Issue 22 finding 4: a source URL carrying credentials (`http://user:PASSWORD@host`, `?token=`) is never stored in
a tool_invocation's output or error, never printed by `show --json` / the session record, nor by `domain check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from evigate.cli.app import _register_commands, app
from evigate.redaction import redact_secrets, redact_value
from evigate.serve.records import session_record
from tests.servers import free_port, prometheus_server

_register_commands()
SECRET = "pr0m-Secret_42"
SERIES = "# TYPE queue_depth gauge\nqueue_depth 7 1772359200\nqueue_depth 9 1772359260\n# EOF\n"
TOOL = {"name": "queue", "description": "Queue depth.", "source": "metrics", "mode": "instant", "query": "queue_depth"}


def _with_credentials(url: str, *, query: str = "") -> str:
    return url.replace("http://", f"http://evigate:{SECRET}@", 1) + query


def _leaks(text: str) -> bool:
    return SECRET in text


@pytest.mark.servers
def test_credentials_in_a_prometheus_url_reach_neither_the_audit_nor_the_session_record(
        tmp_path: Path, make_toolbox, audit) -> None:
    with prometheus_server(SERIES, tmp_path / "auth", basic_auth=("evigate", SECRET)) as url:
        refused_url = f"http://evigate:{SECRET}@127.0.0.1:{free_port()}/?token={SECRET}"
        sources = {"metrics": {"kind": "prometheus", "url": _with_credentials(url), "timeout_s": 5},
                   "down": {"kind": "prometheus", "url": refused_url, "timeout_s": 2}}
        tools = [TOOL, {**TOOL, "name": "queue_down", "source": "down"}]
        toolbox = make_toolbox(sources, tools, tmp_path)
        answered = toolbox.call("queue", time="2026-03-01T10:01:00Z")  # the URL's credentials authenticate
        assert answered.success and answered.output.endswith("queue_depth: 9 at 2026-03-01T10:01:00Z")
        broken = toolbox.call("queue", query_not_declared=1)
        refused = toolbox.call("queue_down", time="2026-03-01T10:01:00Z")
        assert not refused.success and "unreachable" in refused.error and "evigate:***@127.0.0.1" in refused.error
        assert not broken.success
        for result in (answered, broken, refused):
            assert not _leaks(result.model_dump_json())
        rows = toolbox.invocations()
        assert len(rows) == 3 and not any(_leaks(row.model_dump_json()) for row in rows)
        record = session_record(audit, toolbox.session_id)
        assert not _leaks(json.dumps(record, ensure_ascii=False))


@pytest.mark.servers
def test_domain_check_never_prints_the_password_of_an_unreachable_source(tmp_path: Path) -> None:
    domain = tmp_path / "acme"
    CliRunner().invoke(app, ["domain", "init", str(domain)])
    config = yaml.safe_load((domain / "domain.yaml").read_text(encoding="utf-8"))
    config["sources"]["metrics"] = {"kind": "prometheus", "timeout_s": 2,
                                    "url": f"http://admin:{SECRET}@127.0.0.1:{free_port()}/prom?api_key={SECRET}"}
    (domain / "domain.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = CliRunner().invoke(app, ["domain", "check", str(domain)], env={"COLUMNS": "400"})
    assert done.exit_code == 1, done.output
    assert "metrics" in done.output and "admin:***@127.0.0.1" in done.output
    assert not _leaks(done.output)


@given(user=st.from_regex(r"[a-z]{1,8}", fullmatch=True),
       secret=st.from_regex(r"[A-Za-z0-9!$%*+~.-]{1,30}", fullmatch=True),
       scheme=st.sampled_from(["http", "https", "postgresql", "redis"]),
       key=st.sampled_from(["password", "token", "api_key", "access_token", "apikey", "sslpassword"]))
def test_every_credential_shape_is_redacted_wherever_it_sits(user: str, secret: str, scheme: str, key: str) -> None:
    secret = f"S3cr!{secret}"  # a value that cannot also be part of the host, port or key
    text = (f"GET {scheme}://{user}:{secret}@db.internal:5/x?mode=a&{key}={secret} failed: "
            f"{key}={secret} dbname=x; Authorization: Bearer {secret}XYZ12345")
    redacted = redact_secrets(text)
    assert "S3cr!" not in redacted, redacted
    assert f"{scheme}://{user}:***@db.internal:5/x?mode=a&{key}=***" in redacted and "dbname=x" in redacted
    nested = redact_value({"a": [text], "api_key": secret, "token_env": "ACME_TOKEN"})
    assert nested["api_key"] == "***" and nested["token_env"] == "ACME_TOKEN" and "S3cr!" not in nested["a"][0]


def test_text_without_credentials_is_unchanged() -> None:
    for text in ("http://user@host/x", "pool max 20 of 20; timeout=3000ms", "订单 123 支付失败，ERR_TIMEOUT",
                 "see https://wiki.example/db-pool#tokens"):
        assert redact_secrets(text) == text
