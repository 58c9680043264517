"""DiagnosisProgram: the ``dspy.Module`` facade over a session (modules/diagnosis.py) and its rounds (rounds.py).

Routing (V1 + §19.4): PASS → NORMAL; REJECT (any round) → DEGRADED; LOW_CONFID with score ≥ threshold, or after
round 2 → LOW_CONFID_WITH_DISCLAIMER; LOW_CONFID below threshold in round 1 → round 2 with a retry_context. The
two-round limit is code, not prompt. Users only ever see text assembled by ``evigate.rules.render_*``: a checked
Composer output inside fixed templates, or the deterministic renderer — never raw JSON or Executor text. The program
holds the agents, their LMs and the settings (what DSPy saves, loads and optimises); a ``RoundRunner`` built from them
runs each call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy

from evigate.domain import Domain, load_domain
from evigate.llm.models import is_local_model
from evigate.modules.assembly import gatekeeper_from_settings
from evigate.modules.compiled_program import ProgramChoice, choose_program, load_choice
from evigate.modules.composer import Composer
from evigate.modules.diagnosis import MAX_ROUNDS, diagnose
from evigate.modules.executor import Executor
from evigate.modules.planner import Planner
from evigate.modules.progress import Observer, Progress
from evigate.modules.rounds import Agents, RoundRunner
from evigate.modules.rule_writer import RULE_EVALUATION_WAIT_SECONDS
from evigate.modules.saved_state import write_program_manifest
from evigate.modules.verifier import Verifier
from evigate.rules import Gatekeeper
from evigate.settings import AGENTS, Settings, load_settings
from evigate.signatures import DiagnosisResult
from evigate.signatures.query import check_query
from evigate.store import AuditStore
from evigate.tools import DataSource, Toolbox

__all__ = ["MAX_ROUNDS", "DiagnosisProgram", "load_program"]


class DiagnosisProgram(dspy.Module):
    """The whole pipeline. Agents are injected; any ``dspy.Module`` honouring the stage contracts can stand in."""

    rule_evaluation_wait_seconds: float = RULE_EVALUATION_WAIT_SECONDS

    def __init__(
        self,
        settings: Settings,
        store: AuditStore,
        *,
        planner: Any,
        executor: Any,
        verifier: Any,
        composer: Any,
        gatekeeper: Gatekeeper,
        registry: Any = None,
        lms: dict[str, Any] | None = None,
        domain: Domain | None = None,
        source: DataSource | None = None,
    ):
        super().__init__()
        self.settings, self.store, self.gatekeeper = settings, store, gatekeeper
        self.domain = load_domain(domain if domain is not None else settings.domain)
        self.registry = registry if registry is not None else self.domain.build_registry()
        self.source = source if source is not None else self.domain.data_source(store, database=settings.database)
        self.planner, self.executor, self.verifier, self.composer = planner, executor, verifier, composer
        if isinstance(planner, Planner) and planner.source is None:
            planner.source = self.source  # for its error-code census (modules/census.py)
        self._lms: dict[str, Any] = dict(lms or {})
        self._fallback_planner: Planner | None = None
        # Which program answers (modules/compiled_program.py); from_settings chooses and loads it.
        self.program_choice = ProgramChoice("built-in", builtin=dict.fromkeys(AGENTS, "agents given to the program"))

    @classmethod
    def from_settings(
        cls,
        settings_file: str | Path | None = None,
        *,
        database: str | Path | None = None,
        planner: Any = None,
        executor: Any = None,
        verifier: Any = None,
        composer: Any = None,
        lms: dict[str, Any] | None = None,
        registry: Any = None,
        domain: Domain | str | Path | None = None,
        **overrides: Any,
    ) -> DiagnosisProgram:
        """Build from embedded defaults ← settings YAML ← ``EVIGATE_*`` env ← keyword overrides.

        ``domain`` (a directory, a built-in name, ``package.module:attribute`` or a ``Domain`` object) overrides
        the settings' ``domain``; its data is prepared here (the demo world is built only when it is selected).
        """
        if domain is not None and not isinstance(domain, Domain):
            overrides["domain"] = str(domain)
        settings = load_settings(settings_file, database=str(database) if database else None, **overrides)
        chosen = load_domain(domain if isinstance(domain, Domain) else settings.domain)
        if isinstance(domain, Domain):
            settings = settings.model_copy(update={"domain": f"object:{chosen.name}"})
        store = AuditStore(settings.database)
        chosen.prepare(store, database=settings.database)
        registry = registry if registry is not None else chosen.build_registry()
        gatekeeper = gatekeeper_from_settings(settings, chosen)
        ex = settings.executor
        evidence_chars = ex.local_max_evidence_chars if is_local_model(settings.models.for_agent("executor")) else None
        given = {"planner": planner, "executor": executor, "verifier": verifier, "composer": composer}
        built = {
            "planner": lambda: Planner(registry=registry, domain=chosen),
            "executor": lambda: Executor(
                ex.mode, ex.max_iters, evidence_chars or ex.max_evidence_chars, registry=registry, domain=chosen
            ),
            "verifier": Verifier,
            "composer": Composer,
        }
        agents: dict[str, Any] = {name: given[name] if given[name] is not None else built[name]() for name in AGENTS}
        program = cls(settings, store, gatekeeper=gatekeeper, registry=registry, lms=lms, domain=chosen,
                      planner=agents["planner"], executor=agents["executor"], verifier=agents["verifier"],
                      composer=agents["composer"])
        program.program_choice = load_choice(
            choose_program(settings), agents, injected={name for name in AGENTS if given[name] is not None},
            model_of=program.model_of, executor_mode=ex.mode,
        )
        return program

    def model_of(self, agent: str) -> str:
        """The model string an agent runs with: an injected LM's, else the settings' (no LM is built for it)."""
        if agent in self._lms:
            return str(getattr(self._lms[agent], "model", type(self._lms[agent]).__name__))
        return self.settings.models.for_agent(agent)  # type: ignore[arg-type]

    # -- collaborators -------------------------------------------------------------------------------------------
    def lm_for(self, agent: str) -> Any:
        """The LM an agent runs with: an injected one, else (built-in agents only) the settings' model, made lazily."""
        if agent in self._lms:
            return self._lms[agent]
        builtin = (Planner, Executor, Verifier, Composer)
        if not isinstance(getattr(self, agent), builtin):
            return None
        from evigate.llm import lm_from_settings

        self._lms[agent] = lm_from_settings(self.settings, agent)  # type: ignore[arg-type]
        return self._lms[agent]

    def verifier_trace_entries(self) -> int:
        """How many tool-trace entries the Verifier model reads (fewer for the embedded local model)."""
        verifier = self.settings.verifier
        lm = self.lm_for("verifier")  # an injected LM, the settings' one, or None for an agent that brings its own
        model = getattr(lm, "model", "") if lm is not None else self.settings.models.for_agent("verifier")
        return verifier.local_max_trace_entries if is_local_model(str(model)) else verifier.max_trace_entries

    def toolbox(self, session_id: str, round_number: int) -> Toolbox:
        return Toolbox(self.store, session_id, round=round_number, registry=self.registry, source=self.source)

    @property
    def fallback_planner(self) -> Planner:
        if self._fallback_planner is None:
            self._fallback_planner = Planner(registry=self.registry, domain=self.domain, source=self.source)
        return self._fallback_planner

    def runner(self, observer: Observer | None = None) -> RoundRunner:
        """The round runner of one diagnosis over this program's current collaborators (built per call: they may be
        replaced), reporting its progress to ``observer``."""
        return RoundRunner(
            settings=self.settings,
            store=self.store,
            gatekeeper=self.gatekeeper,
            agents=Agents(self.planner, self.executor, self.verifier, self.composer),
            lm_for=self.lm_for,
            toolbox_for=self.toolbox,
            fallback_planner=lambda: self.fallback_planner,
            verifier_trace_entries=self.verifier_trace_entries,
            rule_evaluation_wait_seconds=self.rule_evaluation_wait_seconds,
            progress=Progress(observer),
            program=self.program_choice.record(),
        )

    # -- the program ---------------------------------------------------------------------------------------------
    def forward(self, query: str, observer: Observer | None = None) -> DiagnosisResult:
        """Diagnose ``query``; ``observer`` (if any) hears of its progress (modules/progress.py) as it goes."""
        check_query(query)  # QueryError (a ValueError): not text, empty, or past MAX_QUERY_CHARS
        try:
            return diagnose(self.runner(observer), query)
        finally:
            # The audit file (and the demo world in it) is held only while a question writes or reads it: once the
            # answer is out, another process (`evigate show`) or a read-only connection can open it at once.
            self.store.release()

    # -- persistence ---------------------------------------------------------------------------------------------
    def save(self, path: str | Path, **_: Any) -> Path:  # type: ignore[override]
        """Save every agent's compiled state (prompts, demos) as ``<path>/<agent>.json`` plus a manifest."""
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        saved = []
        for agent in AGENTS:
            module = getattr(self, agent)
            if isinstance(module, dspy.Module):
                module.save(str(target / f"{agent}.json"))
                saved.append(agent)
        # load_program refuses a state file whose digest differs: a changed or planted file is never loaded
        write_program_manifest(target, saved, executor_mode=self.settings.executor.mode)
        return target


def load_program(
    path: str | Path | None = None, settings_file: str | Path | None = None, **kwargs: Any
) -> DiagnosisProgram:
    """A program built from settings whose agents load the compiled state saved under ``path``.

    ``path`` defaults to the settings' ``program_dir``. Agents without a saved file keep their built-in prompts,
    so a directory holding only an optimized ``verifier.json`` is valid. Each state file must match the digest in
    the directory's ``manifest.json``, and only its prompts and demos are applied (never a saved ``lm``).
    """
    if path is None:
        path = kwargs.get("program_dir") or load_settings(settings_file).program_dir
    # A directory given here is a configured one: from_settings loads it instead of the shipped program.
    return DiagnosisProgram.from_settings(settings_file, **{**kwargs, "program_dir": str(path)})
