"""DiagnosisProgram: at most two rounds, routing by the code's verdict, code-assembled final answers.

Routing (V1 + §19.4): PASS → NORMAL; REJECT (any round) → DEGRADED; LOW_CONFID with score ≥ threshold, or after
round 2 → LOW_CONFID_WITH_DISCLAIMER; LOW_CONFID below threshold in round 1 → round 2 with a retry_context. The
two-round limit is code, not prompt. Users only ever see text assembled by ``evigate.rules.render_*``: a checked
Composer output inside fixed templates, or the deterministic renderer — never raw JSON or Executor text.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import dspy

from evigate.domain import Domain, load_domain
from evigate.llm.models import is_local_model
from evigate.modules import progress
from evigate.modules.assembly import gatekeeper_from_settings
from evigate.modules.audit import RoundState, verifier_evaluation
from evigate.modules.calls import late_notes_to
from evigate.modules.composer import Composer
from evigate.modules.executor import Executor, step_key
from evigate.modules.finish import finish_diagnosis
from evigate.modules.planner import Planner
from evigate.modules.rounds import run_round
from evigate.modules.rule_writer import RULE_EVALUATION_WAIT_SECONDS
from evigate.modules.saved_state import load_agent_state, sha256_of, write_manifest
from evigate.modules.verifier import Verifier
from evigate.rules import Gatekeeper, build_retry_context, score_rule_evaluation
from evigate.settings import AGENTS, Settings, load_settings
from evigate.signatures import DiagnosisResult, RoundRecord
from evigate.store import AuditStore
from evigate.tools import DataSource, Toolbox

logger = logging.getLogger(__name__)

MAX_ROUNDS = 2


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
        return cls(
            settings,
            store,
            gatekeeper=gatekeeper,
            registry=registry,
            lms=lms,
            domain=chosen,
            planner=planner if planner is not None else Planner(registry=registry, domain=chosen),
            executor=executor
            if executor is not None
            else Executor(
                ex.mode, ex.max_iters, evidence_chars or ex.max_evidence_chars, registry=registry, domain=chosen
            ),
            verifier=verifier if verifier is not None else Verifier(),
            composer=composer if composer is not None else Composer(),
        )

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

    # -- the program ---------------------------------------------------------------------------------------------
    def forward(self, query: str) -> DiagnosisResult:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        session_id = self.store.start_session(query, settings=self.settings.model_dump(mode="json"))
        progress.session_started(session_id)
        history: list[RoundRecord] = []
        retry = None
        state: RoundState | None = None
        try:
            for round_number in range(1, MAX_ROUNDS + 1):
                progress.round_started(round_number)
                with late_notes_to(self.store, session_id, round_number):
                    state = run_round(self, session_id, query, round_number, retry)
                state.retry_context = retry
                self._write_evaluation(session_id, state, history)
                if not self._needs_another_round(state, round_number):
                    break
                history.append(state.record())
                retry = build_retry_context(state.decision, state.normalized, round_number, self._completed(session_id))
            assert state is not None
            return self._finish(session_id, query, state, history)
        except BaseException as exc:
            # An infrastructure failure, or Ctrl-C / a termination signal (KeyboardInterrupt, SystemExit): record it
            # on the session so that it never stays `running`, then let it go on up.
            self._end_abruptly(session_id, exc, rounds=len(history) + 1)
            raise

    def _end_abruptly(self, session_id: str, exc: BaseException, *, rounds: int) -> None:
        interrupted = not isinstance(exc, Exception)
        error = f"interrupted ({type(exc).__name__})" if interrupted else f"{type(exc).__name__}: {exc}"
        try:
            self.store.finish_session(
                session_id,
                output_type=None,
                verdict=None,
                answer="",
                rounds=rounds,
                groundedness_score=None,
                error=error,
                status="interrupted" if interrupted else "failed",
            )
        except Exception as store_exc:  # the original exception is what the caller must see
            logger.warning("could not mark session %s %s: %s", session_id, "interrupted" if interrupted else
                           "failed", store_exc)

    def _needs_another_round(self, state: RoundState, round_number: int) -> bool:
        decision = state.decision
        threshold = self.settings.verifier.low_confidence_threshold
        return (
            round_number < MAX_ROUNDS and decision.verdict == "LOW_CONFID" and decision.groundedness_score < threshold
        )

    def _completed(self, session_id: str) -> list[str]:
        return [step_key(inv.tool_name, inv.input) for inv in self.store.invocations(session_id) if inv.success]

    def _finish(self, session_id: str, query: str, state: RoundState, history: list[RoundRecord]) -> DiagnosisResult:
        return finish_diagnosis(self, session_id, query, state, history)

    def _write_evaluation(self, session_id: str, state: RoundState, history: list[RoundRecord], **final: Any) -> None:
        evaluation = verifier_evaluation(state, history, **final)
        self.store.merge_self_evaluation(session_id, "verifier_evaluation", evaluation.model_dump(mode="json"))

    def _write_rule_evaluation(self, session_id: str, state: RoundState) -> None:
        score = score_rule_evaluation(state.normalized, self.store.invocations(session_id), state.gate_result)
        self.store.merge_self_evaluation(session_id, "rule_evaluation", score.model_dump(mode="json"))

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
        manifest = {
            "evigate_program": 1,
            "agents": saved,
            "executor_mode": self.settings.executor.mode,
            # load_program refuses a state file whose digest differs: a changed or planted file is never loaded
            "files": {f"{agent}.json": sha256_of(target / f"{agent}.json") for agent in saved},
        }
        write_manifest(target, manifest)
        return target


def load_program(
    path: str | Path | None = None, settings_file: str | Path | None = None, **kwargs: Any
) -> DiagnosisProgram:
    """A program built from settings whose agents load the compiled state saved under ``path``.

    ``path`` defaults to the settings' ``program_dir``. Agents without a saved file keep their built-in prompts,
    so a directory holding only an optimized ``verifier.json`` is valid. Each state file must match the digest in
    the directory's ``manifest.json``, and only its prompts and demos are applied (never a saved ``lm``).
    """
    from evigate.errors import ConfigError

    program = DiagnosisProgram.from_settings(settings_file, **kwargs)
    directory = Path(path) if path is not None else Path(program.settings.program_dir)
    if not directory.is_dir():
        raise ConfigError(f"no saved program at {directory}")
    for agent in AGENTS:
        state_file = directory / f"{agent}.json"
        module = getattr(program, agent)
        if state_file.is_file() and isinstance(module, dspy.Module):
            load_agent_state(module, state_file, agent)
    return program

