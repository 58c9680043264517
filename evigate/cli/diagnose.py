"""`evigate ask` (diagnose a question) and `evigate show` (print a session's whole audit chain)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from evigate.cli.app import app
from evigate.errors import EvigateError

console = Console()
_DATABASE_HELP = "DuckDB file (default ./evigate.duckdb; env EVIGATE_DATABASE)"


@app.command("ask")
def ask(
    query: str = typer.Argument(..., help="the incident question, e.g. 订单 123 支付失败，ERR_TIMEOUT 是什么原因？"),
    settings: Path | None = typer.Option(None, "--settings", "-s", help="settings YAML"),
    database: Path | None = typer.Option(None, "--database", "-d", help=_DATABASE_HELP),
    program_dir: Path | None = typer.Option(None, "--program", help="compiled program directory to load"),
    as_json: bool = typer.Option(False, "--json", help="print the DiagnosisResult as JSON"),
) -> None:
    """Diagnose one question on the configured world and print the checked answer."""
    from evigate.modules.program import DiagnosisProgram, load_program
    from evigate.settings import load_settings

    try:
        resolved = load_settings(settings, database=str(database) if database else None)
        directory = program_dir or Path(resolved.program_dir)
        kwargs: dict[str, Any] = {"database": database}
        if program_dir is not None or directory.is_dir():
            program = load_program(directory, settings, **kwargs)
        else:
            program = DiagnosisProgram.from_settings(settings, **kwargs)
        with console.status("diagnosing… (the local model needs a minute on 2 cores)", spinner="dots"):
            result = program(query=query)
    except EvigateError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print("[yellow]interrupted:[/yellow] the session is recorded as interrupted (evigate show lists it)")
        raise typer.Exit(130) from None
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    style = {"NORMAL": "green", "LOW_CONFID_WITH_DISCLAIMER": "yellow", "DEGRADED": "red"}[result.output_type]
    console.print(Panel(result.answer, title=result.output_type, border_style=style))
    for problem in _agent_problems(program.store, result.session_id):
        console.print(f"[yellow]degraded:[/yellow] {escape(problem)}")
    console.print(
        f"session [bold]{result.session_id}[/bold] · verdict {result.verdict} · "
        f"groundedness {result.groundedness_score:.2f} · rounds {result.rounds}  "
        f"(audit: evigate show {result.session_id})"
    )


def _agent_problems(store: Any, session_id: str) -> list[str]:
    """One line per agent call that failed (model server down, too slow, garbage): why the answer is degraded."""
    try:
        steps = store.steps(session_id)
    except EvigateError:
        return []
    return [f"round {step['round']} {step['agent']}: {step['error']}" for step in steps if step["status"] == "error"]


def _redact_secrets(session: dict[str, Any]) -> None:
    """Sessions written before api_key became a secret hold it in their settings snapshot: never print it."""
    models = (session.get("settings") or {}).get("models")
    if isinstance(models, dict) and models.get("api_key"):
        models["api_key"] = "**********"


@app.command("show")
def show(
    session_id: str = typer.Argument(..., help="a session id printed by `evigate ask`"),
    database: Path | None = typer.Option(None, "--database", "-d", help=_DATABASE_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the raw audit record as JSON"),
) -> None:
    """Print the audit chain: final answer → composer input → verifier → gatekeeper → tool invocations."""
    from evigate.settings import load_settings
    from evigate.store import AuditStore

    try:
        store = AuditStore(load_settings(database=str(database) if database else None).database, read_only=True)
        session = store.session(session_id)
        steps = store.steps(session_id)
        invocations = store.invocations(session_id)
    except EvigateError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    _redact_secrets(session)
    if as_json:
        record = {"session": session, "agent_steps": steps, "tool_invocations": [i.model_dump() for i in invocations]}
        typer.echo(json.dumps(record, ensure_ascii=False, indent=2, default=str))
        return
    evaluation = (session.get("self_evaluation") or {}).get("verifier_evaluation") or {}
    rule = (session.get("self_evaluation") or {}).get("rule_evaluation") or {}
    console.print(Panel(session.get("answer") or "(no answer)", title=f"final answer · {session.get('output_type')}"))
    console.print(
        f"query: {session.get('query')}\nverdict {session.get('verdict')} (model said "
        f"{evaluation.get('model_verdict')}) · groundedness {session.get('groundedness_score')} · "
        f"rounds {session.get('rounds')} · rule evidence_score {rule.get('evidence_score')}"
    )
    _section("composer input", evaluation.get("composer_input"))
    if evaluation.get("composer_violations"):
        _section("composer violations (output replaced by the renderer)", evaluation.get("composer_violations"))
    _section("verifier: claim checks (after code)", evaluation.get("claim_checks"))
    _section("verdict reasons", evaluation.get("reasons"))
    _section("gatekeeper", evaluation.get("gatekeeper_result"))
    _section("executor structured output", evaluation.get("executor_structured_output"))
    for record in evaluation.get("history") or []:
        _section(f"round {record.get('round')} (earlier)", record)
    table = Table("id", "round", "tool", "ok", "input", "output preview", title="tool invocations")
    for inv in invocations:
        table.add_row(
            str(inv.id),
            str(inv.round),
            inv.tool_name,
            "✓" if inv.success else "✗",
            json.dumps(inv.input, ensure_ascii=False)[:60],
            (inv.output_preview or inv.error or "")[:90],
        )
    console.print(table)
    steps_table = Table("round", "agent", "status", "tokens in/out", "ms", "thought", title="agent steps")
    for step in steps:
        steps_table.add_row(
            str(step.get("round")),
            str(step.get("agent")),
            str(step.get("status")),
            f"{step.get('prompt_tokens')}/{step.get('completion_tokens')}",
            f"{float(step.get('latency_ms') or 0):.0f}",
            str(step.get("thought"))[:80],
        )
    console.print(steps_table)


def _section(title: str, value: Any) -> None:
    console.rule(title)
    console.print_json(json.dumps(value, ensure_ascii=False, default=str)) if value else console.print("(none)")
