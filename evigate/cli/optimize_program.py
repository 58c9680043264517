"""`evigate optimize program`: every agent's stage job under one MLflow run, the kept ones written as one program."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.table import Table

from evigate.optimize.jobs import OptimizeConfig


def optimize_program(config: OptimizeConfig, agents: Sequence[str], end_to_end: int, console: Console,
                     progress: Callable[[str, int | None], Callable[[], None]]) -> None:
    """Run the program job and print, per agent, its test delta with the 95 % interval and whether it was compiled."""
    from evigate.optimize.program_job import run_program

    command = program_command(config, agents, end_to_end)  # recorded in the manifest: how to produce it again
    result = run_program(config, agents, end_to_end=end_to_end, command=command, progress=progress)
    table = Table(title=f"evigate optimize program --optimizer {config.optimizer} (model {result.model})")
    for column in ("agent", "test Δ", "95 % interval", "compiled", "why"):
        table.add_column(column)
    for outcome in result.outcomes:
        delta, low, high = outcome.interval or (None, None, None)
        shown = f"[{low:+.3f}, {high:+.3f}]" if low is not None and high is not None else "—"
        table.add_row(outcome.agent, f"{delta:+.3f}" if delta is not None else "—", shown,
                      "yes" if outcome.kept else "no", outcome.reason)
    console.print(table)
    comparison = result.end_to_end
    if comparison is not None:
        for name, figures in (("compiled", comparison.compiled), ("built-in", comparison.builtin)):
            p50 = f"{figures.p50_round_seconds:.1f} s" if figures.p50_round_seconds is not None else "n/a"
            console.print(f"end to end, {name}: useful {figures.useful}/{figures.answerable}, wrong {figures.wrong}, "
                          f"junk {figures.junk}, NORMAL {figures.normal}/{figures.ran}, p50 per round {p50}")
        delta, low, high = comparison.useful_delta
        ratio = f"{comparison.p50_ratio:.2f}" if comparison.p50_ratio is not None else "n/a"
        console.print(f"useful Δ {delta:+.3f} [95 % CI {low:+.3f}, {high:+.3f}]; p50 ratio compiled/built-in {ratio}")
    console.print(f"program {result.program_dir} (agents: {', '.join(result.manifest['agents']) or 'none'}); MLflow "
                  f"run {result.run_id} in {result.tracking_uri} ({result.seconds:.1f}s)")


def program_command(config: OptimizeConfig, agents: Sequence[str], end_to_end: int) -> str:
    """The `evigate optimize program` command line that reproduces ``config`` (every option that shapes the result)."""
    from evigate.optimize.jobs import optimizer_settings

    settings = optimizer_settings(config)
    words = ["evigate", "optimize", "program", "--agents", ",".join(agents), "--optimizer", config.optimizer,
             "--budget", str(settings.budget), "--max-demos", str(config.max_demos), "--labeled-demos",
             str(config.labeled_demos), "--seed", str(config.seed)]
    optional = {"--model": config.model, "--program-dir": config.program_dir, "--eval-limit": config.eval_limit,
                "--reflection-model": config.reflection_model, "--data": config.data_path,
                "--sets": ",".join(config.sets) if config.data_path is None else None,
                "--end-to-end": end_to_end or None}
    words += [part for option, value in optional.items() if value is not None for part in (option, str(value))]
    return shlex.join(words)
