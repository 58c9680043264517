"""Invariant: no claim the Verifier did not allow reaches the answer as a fact, whatever the agents write.

Hypothesis generates the Verifier's judgements (any of the six classes per claim), forged citations, and the
Composer's behaviour (faithful, or restating every claim as fact). The claims are real log lines of order 123, so
the Gatekeeper passes them unless a citation is forged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, get_args

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.modules.program import DiagnosisProgram
from evigate.rules.text.normalize import compact, fold
from evigate.rules.text.phrases import is_hedged, sentences
from evigate.signatures import ComposerInput, ComposerOutput
from evigate.signatures.verifier import ClaimVerification
from evigate.store import AuditStore
from tests.modules.scripted import (
    LOG_STEP,
    ScriptedComposer,
    ScriptedExecutor,
    ScriptedPlanner,
    ScriptedVerifier,
    claim,
    faithful_answer,
    v2,
)

VERIFICATIONS = list(get_args(ClaimVerification))
ALLOWED = {"direct_observation", "reasonable_inference"}
CLAIM_TYPES = ["symptom", "root_cause", "impact", "context"]


class Script:
    """What the scripted agents do in the current example."""

    verdicts: ClassVar[dict[str, str]] = {}
    forged: ClassVar[set[int]] = set()
    types: ClassVar[list[str]] = []
    composer: ClassVar[str] = "faithful"
    claim_texts: ClassVar[list[str]] = []


def write_claims(results: list[Any], _round: int) -> str:
    output = results[0].output
    lines = [line.strip() for line in output.splitlines()[1:] if line.strip()][:5]
    error = next(line.strip() for line in output.splitlines() if "ERR_TIMEOUT" in line)
    # The last claim is built only from entities the query itself names, so an entity check alone cannot
    # tell when a Composer restates it.
    texts = [*lines, "订单 123 支付失败并出现 ERR_TIMEOUT"]
    excerpts = [*lines, error]
    Script.claim_texts = texts
    claims = (
        claim(
            f"claim-{i}",
            results[0],
            text=text,
            excerpt=excerpt,
            claim_type=Script.types[i],
            ids=[10**9 + i] if i in Script.forged else None,
        )
        for i, (text, excerpt) in enumerate(zip(texts, excerpts, strict=True))
    )
    return v2(*claims, missing=["缺少通道侧耗时数据"])


def compose(ci: ComposerInput) -> ComposerOutput:
    faithful = faithful_answer(ci)
    if Script.composer == "faithful":
        return faithful
    # A devious Composer restates claims as fact on top of a faithful answer (which names the gaps and steps the
    # LOW_CONFID rules ask for): every claim, or only the one built from the query's own entities.
    texts = Script.claim_texts if Script.composer == "echo_all" else Script.claim_texts[-1:]
    restated = "".join(f"已确认：{text}。" for text in texts)
    return ComposerOutput(
        answer_summary=faithful.answer_summary, user_facing_answer=restated + faithful.user_facing_answer
    )


def facts_in(answer: str) -> list[str]:
    """Sentences of the answer stated as fact: not hedged themselves and not under a hedged section title."""
    stated = []
    for block in answer.split("\n\n"):
        lines = block.splitlines()
        if lines and lines[0].rstrip().endswith(("：", ":")) and is_hedged(lines[0]):
            continue  # "可能方向（尚未证实）：" / "证据缺口：" sections
        stated.extend(piece for line in lines for piece in sentences(line) if not is_hedged(piece))
    return stated


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    verdicts=st.lists(st.sampled_from(VERIFICATIONS), min_size=6, max_size=6),
    types=st.lists(st.sampled_from(CLAIM_TYPES), min_size=6, max_size=6),
    forged=st.sets(st.integers(0, 5), max_size=2),
    composer=st.sampled_from(["faithful", "echo_all", "echo_entity_safe"]),
)
def test_no_disallowed_claim_is_stated_as_fact(
    world_db: Path, verdicts: list[str], types: list[str], forged: set[int], composer: str
) -> None:
    Script.verdicts = {f"claim-{i}": v for i, v in enumerate(verdicts)}
    Script.types, Script.forged, Script.composer = types, forged, composer
    executor = ScriptedExecutor(write_claims)
    program = DiagnosisProgram.from_settings(
        database=world_db,
        planner=ScriptedPlanner([LOG_STEP]),
        executor=executor,
        verifier=ScriptedVerifier(Script.verdicts, model_verdict="PASS"),
        composer=ScriptedComposer(compose),
    )
    program.settings.verifier.low_confidence_threshold = 0.0  # one round: the judgements above are the final ones
    result = program(query="订单 123 支付失败，ERR_TIMEOUT 是什么原因？")
    evaluation = AuditStore(world_db).session(result.session_id)["self_evaluation"]["verifier_evaluation"]
    claims = evaluation["executor_structured_output"]["claims"]
    effective = {c["claim_id"]: c["verification"] for c in evaluation["claim_checks"]}
    excluded = {f"claim-{i}" for i in forged}
    answer = compact(fold(result.answer))
    stated = [compact(fold(line)) for line in facts_in(result.answer)]
    for c in claims:
        text = compact(fold(c["claim_text"]))
        verification = effective.get(c["claim_id"], "unsupported")
        if c["claim_id"] in excluded or verification == "contradicted":
            assert text not in answer, (c["claim_id"], verification, result.answer)
        elif verification not in ALLOWED:
            assert not any(text in line for line in stated), (c["claim_id"], verification, result.answer)
    if result.verdict == "PASS":
        assert all(effective.get(c["claim_id"]) in ALLOWED for c in claims)
    assert "{" not in result.answer and "**" not in result.answer
