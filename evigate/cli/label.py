"""`evigate label SESSION_ID`: a recorded session as a fixture skeleton for a reviewer to label."""

from __future__ import annotations

from pathlib import Path

import typer
import yaml
from rich.console import Console

from evigate.cli.app import app
from evigate.cli.terminal import plain, print_error
from evigate.errors import EvigateError

console = Console(stderr=True)
_DATABASE_HELP = "DuckDB file or postgresql:// URL (default ./evigate.duckdb; env EVIGATE_DATABASE)"
HEADER = """\
# A session of evigate as a fixture (datasets/README.md, "Your own sessions"). Fill in, then run
#   evigate eval --agent verifier --data THIS_FILE --split dev      (or optimize … --data DIR)
# - split: train, dev or test (keep every case of one incident in one split);
# - gold_labels: the right verification of each claim; suggested_labels holds what code and the Verifier said;
# - gold_verdict: what code must decide from your labels (PASS, LOW_CONFID or REJECT);
# - composer.must_contain: groups of alternatives the answer must hold; composer.must_not_contain: never.
"""


@app.command("label")
def label_command(
    session_id: str = typer.Argument(..., help="a session id printed by `evigate ask`"),
    out: Path = typer.Option(None, "--out", "-o", help="write the skeleton here (default: standard output)"),
    database: str | None = typer.Option(None, "--database", "-d", help=_DATABASE_HELP),
) -> None:
    """Write a recorded session as a fixture to label: query, invocations, claims (with code's labels as
    suggestions, gold labels empty) and the Composer input."""
    from evigate.datasets.labelling import label_skeleton
    from evigate.serve.records import session_record
    from evigate.settings import load_settings
    from evigate.store import AuditStore

    try:
        path = load_settings(database=str(database) if database else None).database
        with AuditStore(path, read_only=True) as store:
            record = session_record(store, session_id)
        skeleton = label_skeleton(record)
    except EvigateError as exc:
        print_error(console, exc)
        raise typer.Exit(2) from None
    text = HEADER + yaml.safe_dump(skeleton, allow_unicode=True, sort_keys=False, width=120)
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        console.print(f"[red]error:[/red] cannot write {plain(str(out))}: {plain(str(exc))}")
        raise typer.Exit(2) from None
    claims = len(skeleton["gold_labels"])
    console.print(plain(f"wrote {out}: {claims} claims to label"
                        f"{', and the Composer input' if skeleton['composer'] else ''}"))
