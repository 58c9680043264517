"""Cached inputs of one pipeline stage: the demo world a job reads, the plan code makes and its recorded tool calls.

A Planner or Executor job scores one stage with everything before it fixed (issue 19):

- :func:`stage_world` builds the demo world (DuckDB) into a temporary file once per process (~2 s), for the
  Planner's error-code census and for recording tool calls;
- :func:`executor_inputs` makes, for one question, the plan code makes without any model (:func:`code_plan`),
  runs its tool steps once against that world and keeps the invocations (ids, inputs, outputs) in memory and on
  disk, under ``<cache dir>/<digest>.json`` keyed by the question, the world's data version and the skills, so a
  second job reuses them without building the world;
- :class:`ReplayToolbox` gives the Executor (plan mode) those recorded results for the same (tool, arguments) and
  refuses any other call with :class:`ReplayMiss`. These are real tool outputs recorded once, not a mock.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field

from evigate.errors import EvigateError
from evigate.signatures import Plan, ToolInvocation
from evigate.tools.toolbox import ToolResult

CACHE_FORMAT = 1
"""Bump when what a cache file holds changes: older files are then ignored (their key differs)."""
DEFAULT_CACHE_DIR = "artifacts/stage-inputs"
CACHE_DIR_ENV = "EVIGATE_STAGE_CACHE_DIR"


class ReplayMiss(EvigateError):
    """The Executor asked for a tool call the cache did not record (the stage's inputs are fixed)."""


class StageWorld:
    """The demo world in a temporary DuckDB file, with its domain, data source and tool registry."""

    def __init__(self) -> None:
        from evigate.demo import ensure_world
        from evigate.demo.domain import demo_domain
        from evigate.store import AuditStore

        self._dir = tempfile.TemporaryDirectory(prefix="evigate-stage-world-")
        self.store: Any = cast(Any, AuditStore(Path(self._dir.name) / "world.duckdb"))
        ensure_world(self.store)
        self.domain = demo_domain()
        self.source = self.domain.data_source(self.store)
        self.registry = self.domain.build_registry()
        self.lock = threading.Lock()

    def close(self) -> None:
        self.store.close()
        self._dir.cleanup()


@cache
def stage_world() -> StageWorld:
    """The process's stage world, built on first use (one job per process: once per job) and removed at exit."""
    world = StageWorld()
    atexit.register(world.close)
    return world


def world_version() -> str:
    """What the recorded outputs depend on: the world generator's version and seed, and the skills' text."""
    from evigate.demo.catalog import DEFAULT_SEED, GENERATOR_VERSION
    from evigate.demo.domain import demo_domain

    skills = json.dumps([skill.model_dump(mode="json") for skill in demo_domain().skills], sort_keys=True,
                        ensure_ascii=False)
    return f"{GENERATOR_VERSION}/{DEFAULT_SEED}/{hashlib.sha256(skills.encode()).hexdigest()[:12]}/{CACHE_FORMAT}"


def code_plan(planner: Any, query: str) -> tuple[Plan, str]:
    """(plan, decided_by) as the Planner makes it without a model: the error code the question names
    (``decisive_skill``), else the census and the best text match (``Planner.fallback``)."""
    from evigate.modules.planner import decisive_skill

    decided = decisive_skill(planner.skills, query, planner.domain)
    if decided is not None:
        skill, code = decided
        proposal = Plan(skill=skill.id, rationale=f"问题中的错误码 {code} 只出现在该 skill 的适用场景中")
        return planner.sanitize(proposal, query, None), "rule"
    census = planner.census(query) is not None
    return planner.fallback(query), "evidence" if census else "fallback"


class RecordedCall(BaseModel):
    """One tool step of the plan and what the recorded toolbox returned for it."""

    tool: str
    args: dict[str, Any]
    result: ToolResult


class StageInputs(BaseModel):
    """One question's cached Executor inputs: the plan and the invocations its steps recorded."""

    key: str
    query: str
    world_version: str
    plan: Plan
    decided_by: str
    calls: list[RecordedCall] = Field(default_factory=list)
    invocations: list[ToolInvocation] = Field(default_factory=list)
    outputs: dict[int, str] = Field(default_factory=dict, description="whole outputs whose preview was cut")

    def recorded_invocations(self) -> list[ToolInvocation]:
        """The invocations as the store returned them (whole outputs included)."""
        return [inv.model_copy(update={"output": self.outputs.get(inv.id)}) for inv in self.invocations]


def cache_key(query: str, version: str | None = None) -> str:
    """The digest a question's cached inputs are filed under."""
    text = json.dumps({"query": query, "world": version or world_version()}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def resolve_cache_dir(cache_dir: str | Path | None = None) -> Path:
    """``cache_dir``, else ``$EVIGATE_STAGE_CACHE_DIR``, else ``artifacts/stage-inputs``."""
    return Path(cache_dir or os.environ.get(CACHE_DIR_ENV) or DEFAULT_CACHE_DIR)


_MEMORY: dict[str, StageInputs] = {}
_MEMORY_LOCK = threading.Lock()


def executor_inputs(query: str, cache_dir: str | Path | None = None) -> StageInputs:
    """The question's cached inputs (memory, then disk), recorded against the stage world on a miss."""
    version = world_version()
    key = cache_key(query, version)
    with _MEMORY_LOCK:
        if key in _MEMORY:
            return _MEMORY[key]
    path = resolve_cache_dir(cache_dir) / f"{key}.json"
    inputs = _read(path, key)
    if inputs is None:
        inputs = record_inputs(query, key, version, stage_world())
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(inputs.model_dump_json(), encoding="utf-8")
        temporary.replace(path)  # never a half-written file for another job to read
    with _MEMORY_LOCK:
        _MEMORY[key] = inputs
    return inputs


def _read(path: Path, key: str) -> StageInputs | None:
    try:
        inputs = StageInputs.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # absent or unreadable: recorded again
    return inputs if inputs.key == key else None


def record_inputs(query: str, key: str, version: str, world: StageWorld) -> StageInputs:
    """Run the code plan's tool steps once through a recorded toolbox of ``world`` and keep what they returned."""
    from evigate.modules.planner import Planner
    from evigate.tools.toolbox import Toolbox

    planner = Planner(domain=world.domain, registry=world.registry, source=world.source)
    plan, decided_by = code_plan(planner, query)
    session_id = f"stage-{key}"
    with world.lock:
        if not world.store.invocations(session_id):
            world.store.start_session(query, session_id=session_id)
            toolbox = Toolbox(world.store, session_id, registry=world.registry, source=world.source)
            calls = [RecordedCall(tool=step.tool, args=step.args, result=toolbox.call(step.tool, **step.args))
                     for step in plan.steps]
        else:  # recorded earlier in this process under the same key
            calls = []
        invocations = world.store.invocations(session_id)
    if not calls:
        calls = [RecordedCall(tool=inv.tool_name, args=inv.input, result=_result_of(inv)) for inv in invocations]
    outputs = {inv.id: inv.output for inv in invocations if inv.output is not None}
    return StageInputs(key=key, query=query, world_version=version, plan=plan, decided_by=decided_by, calls=calls,
                       invocations=invocations, outputs=outputs)


def _result_of(inv: ToolInvocation) -> ToolResult:
    text = inv.output if inv.output is not None else inv.output_preview
    return ToolResult(invocation_id=inv.id, tool_name=inv.tool_name, output=text if inv.success else
                      f"ERROR: {inv.error}", success=inv.success, error=inv.error,
                      retrieval_details=inv.retrieval_details)


class ReplayToolbox:
    """The Toolbox an Executor in plan mode sees for a cached question: ``call`` returns the recorded result of the
    same (tool, arguments) and raises :class:`ReplayMiss` for anything else; ``invocations`` are the recorded ones."""

    def __init__(self, inputs: StageInputs, registry: Any = None) -> None:
        from evigate.demo.domain import demo_registry
        from evigate.modules.evidence_view import step_key

        self.inputs = inputs
        self.registry = registry if registry is not None else demo_registry()
        self._results = {step_key(call.tool, call.args): call.result for call in inputs.calls}
        self._invocations = inputs.recorded_invocations()
        self.store_failures: list[Exception] = []

    def call(self, name: str, /, **args: Any) -> ToolResult:
        from evigate.modules.evidence_view import step_key

        key = step_key(name, args)
        result = self._results.get(key)
        if result is None:
            recorded = ", ".join(sorted(self._results)) or "none"
            raise ReplayMiss(f"no recorded call {key} for this question (its inputs are fixed; recorded: {recorded})")
        return result

    def invocations(self, round: int | None = None) -> list[ToolInvocation]:
        return [inv for inv in self._invocations if round is None or inv.round == round]

    def specs(self) -> list[dict[str, Any]]:
        return self.registry.specs()

    def __deepcopy__(self, memo: dict[int, Any]) -> ReplayToolbox:
        return self  # read-only: optimizers copy examples, never the recorded calls

    def __repr__(self) -> str:
        return f"ReplayToolbox({len(self._results)} recorded calls)"
