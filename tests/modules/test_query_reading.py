"""A misspelt name is read as the domain's for the whole session, and the audit keeps the reading (issue 18)."""

from __future__ import annotations

from pathlib import Path

from evigate.datasets.codeonly_sessions import code_only_program


def test_a_misspelt_service_is_answered_as_the_domains_and_the_reading_is_audited(world_db: Path,
                                                                                    tmp_path: Path) -> None:
    """Measured on train (typo-mixed-03, code alone): "paymnet-service 九点半大量失败" confirmed nothing before; the
    steps asked a service with no records and no line of payment-service was about the question."""
    world = tmp_path / "world.duckdb"
    world.write_bytes(world_db.read_bytes())
    program = code_only_program(world)
    result = program(query="paymnet-service 九点半大量失败，原因？")
    session = program.store.session(result.session_id)
    assert session["query"] == "paymnet-service 九点半大量失败，原因？"  # recorded as asked
    reading = session["self_evaluation"]["query_reading"]
    assert reading["read_as"] == "payment-service 九点半大量失败，原因？"
    assert reading["corrections"] == [{"written": "paymnet-service", "read_as": "payment-service"}]
    services = {inv.input.get("service") for inv in program.store.invocations(result.session_id)}
    assert "payment-service" in services and "paymnet-service" not in services
    assert result.verdict == "PASS" and "ERR_DB_POOL_EXHAUSTED" in result.answer
    # a question without a misspelt name is read as asked, and says so
    plain = program(query="payment-service 九点半大量失败，原因？")
    assert program.store.session(plain.session_id)["self_evaluation"]["query_reading"]["corrections"] == []
