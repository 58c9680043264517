"""`evigate eval`, `evigate optimize`, `evigate ui`: evaluate and optimize agents, tracked in MLflow."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evigate.cli.app import app
from evigate.errors import EvigateError

console = Console()


class EvalAgent(StrEnum):
    verifier = "verifier"
    composer = "composer"
    planner = "planner"
    executor = "executor"
    program = "program"


class OptimizeAgent(StrEnum):
    verifier = "verifier"
    composer = "composer"
    planner = "planner"
    executor = "executor"
    program = "program"  # every agent against one run: evigate/cli/optimize_program.py


class Optimizer(StrEnum):
    bootstrap = "bootstrap"
    random_search = "random-search"
    mipro = "mipro"
    gepa = "gepa"


class EvalSplit(StrEnum):
    dev = "dev"
    test = "test"


SETS_HELP = "Verifier sets, comma-separated: demo_world, holmesgpt"
MODEL_HELP = "model string, e.g. local/qwen2.5-coder-0.5b or openai/gpt-4o-mini (default: the agent's in settings)"
TRACKING_HELP = "MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else sqlite:///./mlruns.db)"
DATA_HELP = ("a team's own labelled fixtures (file or directory, formats of datasets/README.md, or sessions labelled "
             "with `evigate label`) instead of the shipped sets; verifier and composer only (planner and executor "
             "are scored on the question bank)")
AGENT_HELP = ("verifier / composer: their fixtures; planner / executor: the question bank, scored by code against the "
              "demo world (executor: plan mode over cached tool outputs); program: verifier → composer")
LLM_THREADS_HELP = "llama.cpp threads for local models (default: the engine's; use 1 when other work holds a core)"


@contextmanager
def _progress() -> Iterator[Callable[[str, int | None], Callable[[], None]]]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:

        def start(description: str, total: int | None) -> Callable[[], None]:
            task = progress.add_task(description, total=total)
            return lambda: progress.advance(task)

        yield start


def _sets(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _quiet_environment() -> None:
    # litellm otherwise tries to download a price list on import; evigate runs offline.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _fail(exc: Exception) -> typer.Exit:
    console.print(f"[red]error:[/red] {exc}")
    return typer.Exit(2)


@app.command("eval")
def eval_command(
    agent: EvalAgent = typer.Option(EvalAgent.verifier, "--agent", help=AGENT_HELP),
    split: EvalSplit = typer.Option(EvalSplit.dev, "--split", help="fixture split"),
    model: str = typer.Option(None, "--model", help=MODEL_HELP),
    program_dir: Path = typer.Option(None, "--program-dir", help="saved program (default: settings program_dir)"),
    sets: str = typer.Option("demo_world,holmesgpt", "--sets", help=SETS_HELP),
    limit: int = typer.Option(None, "--limit", min=0,
                              help="evaluate at most N examples, verdict-balanced (default for local models: 6; "
                                   "planner all, executor 30, incident-balanced; else all; 0 = all)"),
    threads: int = typer.Option(1, "--threads", min=1, help="parallel calls (keep 1 for the local model)"),
    llm_threads: int = typer.Option(None, "--llm-threads", min=1, help=LLM_THREADS_HELP),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help=TRACKING_HELP),
    data: Path = typer.Option(None, "--data", help=DATA_HELP),
) -> None:
    """Score the saved (or built-in) agents on a fixture split; logs a run to MLflow."""
    _quiet_environment()
    from evigate.optimize.eval_jobs import run_eval

    try:
        with _progress() as start:
            result = run_eval(agent.value, split.value, model=model, program_dir=program_dir, sets=_sets(sets),
                              eval_limit=limit, tracking_uri=tracking_uri, num_threads=threads,
                              llm_threads=llm_threads, progress=start, data_path=data)
    except (EvigateError, ValueError) as exc:
        raise _fail(exc) from exc
    table = Table(title=f"evigate eval --agent {agent.value} --split {split.value}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in sorted(result.metrics.items()):
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) and not value.is_integer() else f"{value:g}")
    console.print(table)
    state = result.state_file or "built-in prompts"
    console.print(f"state: {state}; MLflow run {result.run_id} in {result.tracking_uri} ({result.seconds:.1f}s)")


@app.command("optimize")
def optimize_command(
    agent: OptimizeAgent = typer.Argument(..., help="agent to optimize (planner / executor: on the question bank with "
                                                    "their inputs cached, see datasets/README.md)"),
    optimizer: Optimizer = typer.Option(Optimizer.bootstrap, "--optimizer", help="DSPy optimizer"),
    budget: int = typer.Option(
        None, "--budget", min=1,
        help="optimizer effort: bootstrap = train examples tried; random-search = candidate programs; "
             "mipro = trials; gepa = metric calls (defaults 8 / 4 / 6 / 60)",
    ),
    model: str = typer.Option(None, "--model", help=MODEL_HELP),
    reflection_model: str = typer.Option(None, "--reflection-model", help="GEPA's reflection LM (default: --model)"),
    program_dir: Path = typer.Option(None, "--program-dir", help="where <agent>.json is saved (default: settings)"),
    sets: str = typer.Option("demo_world,holmesgpt", "--sets", help=SETS_HELP),
    max_demos: int = typer.Option(2, "--max-demos", min=0, help="bootstrapped demos per predictor"),
    labeled_demos: int = typer.Option(0, "--labeled-demos", min=0, help="gold-labelled demos per predictor"),
    eval_limit: int = typer.Option(None, "--eval-limit", min=0,
                                   help="cap dev and test at N examples each, verdict-balanced (default for local "
                                        "models: 6; planner all, executor 30; else all; 0 = all)"),
    threads: int = typer.Option(1, "--threads", min=1, help="parallel calls (keep 1 for the local model)"),
    seed: int = typer.Option(0, "--seed"),
    llm_threads: int = typer.Option(None, "--llm-threads", min=1, help=LLM_THREADS_HELP),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help=TRACKING_HELP),
    data: Path = typer.Option(None, "--data", help=DATA_HELP),
    agents: str = typer.Option("planner,executor,verifier,composer", "--agents",
                               help="program: the agents to optimize, comma-separated"),
    end_to_end: int = typer.Option(0, "--end-to-end", min=0,
                                   help="program: then ask the first N test questions of the question bank with and "
                                        "without the compiled program (0 = skip)"),
) -> None:
    """Optimize an agent's prompt; prints baseline vs optimized on dev and test and saves the program.

    `program` runs each agent's job as a child of one MLflow run and compiles only the agents whose test delta
    interval excludes zero (a gain); the others keep their built-in prompts."""
    _quiet_environment()
    from evigate.optimize.intervals import format_interval, verdict_line
    from evigate.optimize.jobs import OptimizeConfig, run_optimize, summary_rows

    config = OptimizeConfig(
        agent=agent.value, optimizer=optimizer.value, budget=budget, model=model, program_dir=program_dir,
        sets=_sets(sets), max_demos=max_demos, labeled_demos=labeled_demos, eval_limit=eval_limit,
        num_threads=threads, seed=seed, tracking_uri=tracking_uri, reflection_model=reflection_model,
        llm_threads=llm_threads, data_path=data,
    )
    if agent is OptimizeAgent.program:
        from evigate.cli.optimize_program import optimize_program

        try:
            with _progress() as start:
                optimize_program(config, _sets(agents), end_to_end, console, start)
        except (EvigateError, ValueError) as exc:
            raise _fail(exc) from exc
        return
    try:
        with _progress() as start:
            result = run_optimize(config, progress=start)
    except (EvigateError, ValueError) as exc:
        raise _fail(exc) from exc
    table = Table(title=f"evigate optimize {agent.value} --optimizer {optimizer.value}")
    for column, justify in (("split", "left"), ("metric", "left"), ("baseline", "right"), ("optimized", "right"),
                            ("Δ", "right"), ("95 % CI", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for split, metric, before, after in summary_rows(result):
        interval = result.intervals.get(split, {}).get(metric)
        table.add_row(split, metric, f"{before:.3f}", f"{after:.3f}", f"{after - before:+.3f}",
                      format_interval(interval) if interval else "")  # set-level metrics have no paired interval
    console.print(table)
    for split, intervals in result.intervals.items():
        console.print(verdict_line(split, intervals))
    console.print(f"saved {result.program_path}; MLflow run {result.run_id} in {result.tracking_uri}; "
                  f"compile {result.compile_seconds:.1f}s, total {result.seconds:.1f}s")


@app.command("ui")
def ui_command(
    port: int = typer.Option(5000, "--port", min=0, max=65535, help="port on 127.0.0.1 (0 = any free port)"),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help=TRACKING_HELP),
) -> None:
    """Start the MLflow UI on 127.0.0.1 over evigate's tracking store; Ctrl-C stops it and all its workers."""
    from evigate.optimize.ui import MlflowUI, stop_on_signals

    try:
        ui = MlflowUI(tracking_uri, port=port)
        with stop_on_signals():  # SIGTERM and SIGHUP (terminal closed) stop the server too
            try:
                url = ui.start()
                console.print(f"MLflow UI at {url} (store {ui.backend_uri}); Ctrl-C to stop")
                while ui.process is not None and ui.process.poll() is None:
                    ui.process.wait(timeout=None)
                code = ui.process.returncode if ui.process else "?"
                console.print(f"[red]mlflow ui exited with code {code}[/red]")
            except KeyboardInterrupt:
                console.print("stopping MLflow UI…")
            finally:
                ui.stop()
    except EvigateError as exc:
        raise _fail(exc) from exc
