"""`evigate verify`: is every sentence of an answer supported by the given context files?"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from evigate.cli.app import app
from evigate.cli.terminal import json_for_terminal, safe_markup, strip_controls
from evigate.errors import EvigateError
from evigate.files import read_text_bounded

EXIT_UNSUPPORTED = 1
EXIT_USAGE = 2
MAX_FILE_BYTES = 20_000_000
_LABEL_STYLE = {
    "direct_observation": "green", "reasonable_inference": "cyan", "overstated": "yellow", "unsupported": "red",
    "external_unknown": "red", "contradicted": "bold red", "not_a_claim": "dim",
}


def _read(path: Path, what: str) -> str:
    # Bounded whatever the file is (/dev/zero, a FIFO, /dev/stdin, /proc): an error past the cap, never a short
    # read. A stray non-UTF-8 byte must not stop a check of the rest, so it is replaced, not refused.
    return read_text_bounded(path, what=what, limit=MAX_FILE_BYTES, errors="replace")


@app.command("verify")
def verify_command(
    answer: Path = typer.Option(..., "--answer", "-a", help="text file with the answer to check"),
    context: list[Path] = typer.Option(..., "--context", "-c", help="context file(s); each file is one passage"),
    as_json: bool = typer.Option(False, "--json", help="print the VerifyResult as JSON"),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Verifier model for what code cannot decide, e.g. local/qwen2.5-coder-0.5b"
    ),
) -> None:
    """Check an answer against context passages; exit 1 when a sentence is unsupported, contradicted or unknown."""
    from evigate.verification import verify

    console = Console()
    try:
        answer_text = _read(answer, "answer file")
        passages = {str(path): _read(path, "context file") for path in context}
        result = verify(answer_text, passages, model=model)
    except EvigateError as exc:
        typer.echo(f"error: {strip_controls(str(exc))}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    if as_json:
        typer.echo(json_for_terminal(json.dumps(result.to_dict(), ensure_ascii=False, indent=2)))
    else:
        table = Table(show_lines=False)
        for column in ("#", "label", "sentence", "evidence / reason"):
            table.add_column(column, overflow="fold")
        for number, sentence in enumerate(result.sentences, start=1):
            style = _LABEL_STYLE.get(sentence.label, "")
            where = f"{sentence.passage}[{sentence.span[0]}:{sentence.span[1]}] " if sentence.span else ""
            table.add_row(str(number), f"[{style}]{sentence.label}[/{style}]", safe_markup(sentence.text),
                          safe_markup(f"{where}{sentence.reason}"))
        console.print(table)
        word = "supported" if result.supported else "NOT supported"
        console.print(f"{word} · verdict {result.verdict} · groundedness {result.groundedness_score:.2f}"
                      + (f" · model {safe_markup(result.model)}" if result.model else " · code only"))
        for note in result.notes:
            console.print(f"note: {safe_markup(note)}")
    if not result.supported:
        raise typer.Exit(EXIT_UNSUPPORTED)
