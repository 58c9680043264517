"""The round runner's typed interface: every collaborator is a field, the round's data are arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evigate.modules.rounds import Agents, RoundRunner
from evigate.tools import Toolbox
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier
from tests.modules.test_program_routing import QUERY, build, good_claims

BOTH_DIRECT = {"claim-1": "direct_observation", "claim-2": "direct_observation"}


def test_a_round_runs_on_the_collaborators_it_is_given_and_nothing_else(world_db: Path) -> None:
    program = build(world_db, verifier=ScriptedVerifier({}))  # supplies the settings, store and gatekeeper only
    asked: list[str] = []
    toolboxes: list[tuple[str, int]] = []

    def lm_for(agent: str) -> Any:
        asked.append(agent)
        return None

    def toolbox_for(session_id: str, round_number: int) -> Toolbox:
        toolboxes.append((session_id, round_number))
        return program.toolbox(session_id, round_number)

    verifier = ScriptedVerifier(BOTH_DIRECT)
    runner = RoundRunner(
        settings=program.settings, store=program.store, gatekeeper=program.gatekeeper,
        agents=Agents(ScriptedPlanner(), ScriptedExecutor(good_claims), verifier, ScriptedComposer()),
        lm_for=lm_for, toolbox_for=toolbox_for, fallback_planner=lambda: program.fallback_planner,
        verifier_trace_entries=lambda: 3,
    )
    session_id = program.store.start_session(QUERY)
    state = runner.run(session_id, QUERY, 2, None)
    assert state.round == 2 and state.decision.verdict == "PASS"
    assert toolboxes == [(session_id, 2)] and asked == ["planner", "executor", "verifier"]
    assert len(verifier.inputs) == 1 and len(verifier.inputs[0].tool_trace_summary) <= 3
    assert state.contribution is not None and state.contribution.round == 2
    steps = program.store.steps(session_id)
    assert [(step["agent"], step["round"]) for step in steps] == [("planner", 2), ("executor", 2), ("verifier", 2)]
