"""`evigate ask` (diagnose a question) and `evigate show` (print a session's whole audit chain)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from evigate.cli.app import app
from evigate.cli.terminal import escape, plain, print_error, strip_controls
from evigate.errors import EvigateError

console = Console()
_DATABASE_HELP = "DuckDB file or postgresql:// URL (default ./evigate.duckdb; env EVIGATE_DATABASE)"


@app.command("ask")
def ask(
    query: str = typer.Argument(..., help="the incident question, e.g. 订单 123 支付失败，ERR_TIMEOUT 是什么原因？"),
    settings: Path | None = typer.Option(None, "--settings", "-s", help="settings YAML"),
    database: str | None = typer.Option(None, "--database", "-d", help=_DATABASE_HELP),
    program_dir: Path | None = typer.Option(None, "--program", help="compiled program directory to load"),
    as_json: bool = typer.Option(False, "--json", help="print the DiagnosisResult as JSON"),
    domain: str | None = typer.Option(None, "--domain", help="domain folder (or 'demo'); default: settings' domain"),
) -> None:
    """Diagnose one question on the configured domain and print the checked answer."""
    from evigate.cli.live import StageDisplay

    if not query.strip():
        print_error(console, "the question is empty: ask something, e.g. evigate ask \"订单 123 支付失败，为什么？\"")
        raise typer.Exit(2)
    try:
        from evigate.signatures.query import check_query

        check_query(query)  # the same limit as the HTTP API and DiagnosisProgram, before anything is built
        program = build_program(settings, database, program_dir, domain=domain)
        with StageDisplay(Console(stderr=True)) as display:
            result = display.run(program, query)
    except EvigateError as exc:
        print_error(console, exc)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print("[yellow]interrupted:[/yellow] the session is recorded as interrupted (evigate show lists it)")
        raise typer.Exit(130) from None
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    style = {"NORMAL": "green", "LOW_CONFID_WITH_DISCLAIMER": "yellow", "DEGRADED": "red"}[result.output_type]
    console.print(Panel(plain(result.answer), title=result.output_type, border_style=style))
    for problem in _agent_problems(program.store, result.session_id):
        console.print(Text.assemble(("degraded: ", "yellow"), plain(problem)))
    console.print(
        f"session [bold]{escape(result.session_id)}[/bold] · verdict {result.verdict} · "
        f"groundedness {result.groundedness_score:.2f} · rounds {result.rounds}  "
        f"(audit: evigate show {escape(result.session_id)})"
    )


def build_program(
    settings: Path | None, database: Path | str | None, program_dir: Path | None, *, domain: str | None = None
) -> Any:
    """The program `ask` and `serve` run: a saved program from ``--program`` or a *configured* program_dir, else
    the built-in one. The default program_dir is not looked up in the current directory: a state file planted
    there must not change what runs."""
    from evigate.modules.program import DiagnosisProgram, load_program
    from evigate.settings import load_settings

    resolved = load_settings(settings, database=str(database) if database else None)
    kwargs: dict[str, Any] = {"database": database, "domain": domain}
    if program_dir is not None:
        return load_program(program_dir, settings, **kwargs)
    if "program_dir" in resolved.model_fields_set and Path(resolved.program_dir).is_dir():
        return load_program(Path(resolved.program_dir), settings, **kwargs)
    return DiagnosisProgram.from_settings(settings, **kwargs)


def _agent_problems(store: Any, session_id: str) -> list[str]:
    """One line per agent call that failed (model server down, too slow, garbage): why the answer is degraded."""
    try:
        steps = store.steps(session_id)
    except EvigateError:
        return []
    return [f"round {step['round']} {step['agent']}: {step['error']}" for step in steps if step["status"] == "error"]


@app.command("show")
def show(
    session_id: str | None = typer.Argument(None, help="a session id printed by `evigate ask` (or --list)"),
    database: str | None = typer.Option(None, "--database", "-d", help=_DATABASE_HELP),
    as_json: bool = typer.Option(False, "--json", help="print the raw audit record as JSON"),
    list_sessions: bool = typer.Option(False, "--list", help="list past sessions, newest first (filters below)"),
    verdict: str | None = typer.Option(None, "--verdict", help="--list: PASS | LOW_CONFID | REJECT"),
    output_type: str | None = typer.Option(None, "--output-type", help="--list: NORMAL | LOW_CONFID_WITH_DISCLAIMER "
                                                                       "| DEGRADED"),
    status: str | None = typer.Option(None, "--status", help="--list: running | finished | failed | interrupted"),
    since: str | None = typer.Option(None, "--since", help="--list: created at or after (ISO 8601, UTC)"),
    until: str | None = typer.Option(None, "--until", help="--list: created before (ISO 8601, UTC)"),
    text: str | None = typer.Option(None, "--text", help="--list: text in the question, answer or session id"),
    limit: int = typer.Option(20, "--limit", help="--list: sessions per page (1-200)"),
    offset: int = typer.Option(0, "--offset", help="--list: sessions to skip"),
) -> None:
    """Print the audit chain: final answer → composer input → verifier → gatekeeper → tool invocations."""
    from evigate.serve.records import session_record
    from evigate.settings import load_settings
    from evigate.store import AuditStore, SessionQuery

    if list_sessions == (session_id is not None):
        print_error(console, "give a session id, or --list (with filters) to list sessions, not both")
        raise typer.Exit(2)
    try:
        path = load_settings(database=str(database) if database else None).database
        query = SessionQuery(verdict=verdict, output_type=output_type, status=status, since=since, until=until,
                             text=text, limit=limit, offset=offset) if list_sessions else None
        with AuditStore(path, read_only=True) as store:  # closed at once: another process may want to write
            if query is not None:
                page = store.find_sessions(query)
            else:
                record = session_record(store, str(session_id))
    except EvigateError as exc:
        print_error(console, exc)
        raise typer.Exit(2) from None
    if query is not None:
        from evigate.cli.listing import print_sessions

        print_sessions(console, page, as_json)
        return
    if as_json:
        typer.echo(json.dumps(record, ensure_ascii=False, indent=2))
        return
    _print_record(record)


def _print_record(record: dict[str, Any]) -> None:
    """Everything below is data (queries, model text, tool output): printed only through ``plain``."""
    session = record["session"]
    evaluation = (session.get("self_evaluation") or {}).get("verifier_evaluation") or {}
    rule = (session.get("self_evaluation") or {}).get("rule_evaluation") or {}
    title = f"final answer · {session.get('output_type')}"
    console.print(Panel(plain(session.get("answer") or "(no answer)"), title=plain(title)))
    console.print(
        plain(
            f"query: {session.get('query')}\nverdict {session.get('verdict')} (model said "
            f"{evaluation.get('model_verdict')}) · groundedness {session.get('groundedness_score')} · "
            f"rounds {session.get('rounds')} · status {session.get('status')} · "
            f"rule evidence_score {rule.get('evidence_score')}"
        )
    )
    if session.get("error"):
        console.print(Text.assemble(("error: ", "red"), plain(session.get("error"))))
    reading = (session.get("self_evaluation") or {}).get("query_reading") or {}
    if reading.get("corrections"):
        read = ", ".join(f"{item.get('written')} → {item.get('read_as')}" for item in reading["corrections"])
        console.print(plain(f"read as: {reading.get('read_as')} ({read})"))
    _print_program((session.get("settings") or {}).get("program"))
    _print_contributions((session.get("self_evaluation") or {}).get("contributions"))
    _section("composer input", evaluation.get("composer_input"))
    if evaluation.get("composer_violations"):
        _section("composer violations (output replaced by the renderer)", evaluation.get("composer_violations"))
    _section("verifier: claim checks (after code)", evaluation.get("claim_checks"))
    _section("labels decided by code (label_sources: code = confirmed quote, model = Verifier)",
             evaluation.get("code_confirmation"))
    _section("verdict reasons", evaluation.get("reasons"))
    _section("gatekeeper", evaluation.get("gatekeeper_result"))
    _section("executor structured output", evaluation.get("executor_structured_output"))
    for earlier in evaluation.get("history") or []:
        _section(f"round {earlier.get('round')} (earlier)", earlier)
    _print_table("tool invocations", ("id", "round", "tool", "ok", "input", "output preview"),
                 record["tool_invocations"], lambda inv: (
                     plain(inv.get("id")),
                     plain(inv.get("round")),
                     plain(inv.get("tool_name")),
                     "✓" if inv.get("success") else "✗",
                     plain(json.dumps(inv.get("input"), ensure_ascii=False), 60),
                     plain(inv.get("output_preview") or inv.get("error") or "", 90),
                 ))
    _print_table("agent steps", ("round", "agent", "status", "tokens in/out", "ms", "thought"),
                 record["agent_steps"], lambda step: (
                     plain(step.get("round")),
                     plain(step.get("agent")),
                     plain(step.get("status")),
                     plain(f"{step.get('prompt_tokens')}/{step.get('completion_tokens')}"),
                     f"{float(step.get('latency_ms') or 0):.0f}",
                     plain(step.get("thought"), 80),
                 ))


def _print_table(title: str, columns: tuple[str, ...], rows: Iterable[dict[str, Any]],
                 cells: Callable[[dict[str, Any]], tuple[str | Text, ...]]) -> None:
    """One table of a record's rows (tool invocations, agent steps), a row's cells as ``cells`` renders them."""
    table = Table(*columns, title=title)
    for row in rows:
        table.add_row(*cells(row))
    console.print(table)


def _print_program(program: Any) -> None:
    """Which prompts answered: the shipped compiled program, a configured program_dir, or the built-in ones."""
    if isinstance(program, dict) and program.get("source"):
        compiled = ", ".join(str(agent) for agent in program.get("compiled_agents") or []) or "none"
        where = f" {program['directory']}" if program.get("directory") else ""
        console.print(plain(f"program: {program['source']}{where} · compiled agents: {compiled}"))


def _print_contributions(contributions: Any) -> None:
    """Per round, what became of the Executor's claims and who labelled them; then what the Composer's text became."""
    console.rule("what each agent contributed")
    if not isinstance(contributions, dict):
        console.print("(not recorded for this session)")
        return
    lines: list[str] = []
    for entry in contributions.get("rounds") or []:
        executor, verifier = entry.get("executor") or {}, entry.get("verifier") or {}
        lines.append(
            f"round {entry.get('round')} · executor claims: kept {executor.get('kept')} · rewritten "
            f"{executor.get('rewritten')} · added by code {executor.get('added_by_code')} · dropped "
            f"{executor.get('dropped')} · verifier model {'called' if verifier.get('model_called') else 'not called'}"
            f" · labels from model {verifier.get('labels_from_model')} / code {verifier.get('labels_from_code')} / "
            f"caps {verifier.get('labels_from_caps')}"
        )
        lines += [f"  {item.get('claim_id')}: {item.get('status')} ({item.get('reason')})"
                  for item in executor.get("claims") or [] if isinstance(item, dict) and item.get("status") != "kept"]
    composer = contributions.get("composer") or {}
    if composer:
        lines.append(f"composer: {composer.get('status')} · {composer.get('reason')}")
        lines += [f"  violation: {item}" for item in composer.get("violations") or []]
        lines += [f"  fact it left out, listed by code: {item}" for item in composer.get("facts_added") or []]
        lines += [f"  dropped {item.get('kind')}: {item.get('text')} ({item.get('reason')})"
                  for item in composer.get("lines_dropped") or [] if isinstance(item, dict)]
    console.print(plain("\n".join(lines) or "(none)"), soft_wrap=True)


def _section(title: str, value: Any) -> None:
    console.rule(plain(title))
    if not value:
        console.print("(none)")
        return
    # JSON escapes every control character, and print_json highlights without reading markup.
    console.print_json(strip_controls(json.dumps(value, ensure_ascii=False, default=str)))
