"""bench/grounding_holmesgpt.py: its claim generator, and the Gatekeeper's rates on a small sample of real outputs."""

from __future__ import annotations

import pytest

from evigate.datasets.holmesgpt import upstream_path
from evigate.errors import DatasetError
from evigate.rules import Gatekeeper
from tests.bench.scripts import load_bench


def _load_bench():
    return load_bench("grounding_holmesgpt")


def _available() -> bool:
    try:
        return upstream_path().exists()
    except DatasetError:
        return False


pytestmark = pytest.mark.skipif(not _available(), reason="../shared/external/holmesgpt/holmesgpt_cases.jsonl absent")
bench = _load_bench()


@pytest.fixture(scope="module")
def sample():
    sessions = bench.load_sessions(limit=14)
    return sessions, bench.generate(sessions, seed=7, lines_per_output=1)


def test_the_generator_is_deterministic_and_seeded(sample) -> None:
    sessions, claims = sample
    assert bench.generate(sessions, seed=7, lines_per_output=1) == claims
    assert bench.generate(sessions, seed=8, lines_per_output=1) != claims


def test_true_claims_quote_their_invocation_and_perturbations_change_something(sample) -> None:
    sessions, claims = sample
    kinds = {claim.kind for claim in claims}
    assert {"true", "number", "name", "reason", "id", "tool", "misattribution"} <= kinds
    true_texts = set()
    for claim in claims:
        invocations = {inv.id: inv for inv in sessions[claim.session].invocations}
        cited = invocations[claim.invocation_id]
        if claim.kind == "true":
            assert claim.excerpt in cited.output_preview and claim.tool_name == cited.tool_name
            true_texts.add(claim.claim_text)
        elif claim.kind == "tool":
            assert claim.tool_name != cited.tool_name
        elif claim.kind == "misattribution":
            assert claim.excerpt not in cited.output_preview and claim.tool_name == cited.tool_name
    assert all(claim.claim_text not in true_texts for claim in claims if claim.kind in ("number", "name", "reason",
                                                                                         "id"))


def test_the_gate_meets_the_targets_on_a_sample(sample) -> None:
    sessions, claims = sample
    tallies = bench.evaluate(claims, sessions)
    catch, false_alarm = bench.summary(tallies)
    assert catch >= bench.TARGET_CATCH, {kind: (t.flagged, t.total) for kind, t in tallies.items()}
    assert false_alarm <= bench.TARGET_FALSE_ALARM, tallies["true"].examples
    assert bench.paraphrase_false_alarm(tallies) <= bench.TARGET_FALSE_ALARM


def test_the_rates_measure_the_gate(sample) -> None:
    # With the entity rules off, swapped reasons go through: the figure depends on what the gate checks.
    sessions, claims = sample
    reasons = [claim for claim in claims if claim.kind == "reason"]
    blind = Gatekeeper.with_overrides({"claim.entity_grounding": {"enabled": False},
                                       "claim.external_entity": {"enabled": False},
                                       "evidence.excerpt_similarity": {"enabled": False}})
    assert bench.evaluate(reasons, sessions, blind)["reason"].rate < 0.5
    assert bench.evaluate(reasons, sessions)["reason"].rate >= 0.9


def test_main_prints_the_table(capsys) -> None:
    assert bench.main(["--limit-cases", "3", "--lines-per-output", "1"]) == 0
    out = capsys.readouterr().out
    assert "true (false alarm)" in out and "catch rate" in out


def test_paraphrases_quote_their_line_and_their_twins_change_it(sample) -> None:
    sessions, claims = sample
    kinds = {claim.kind for claim in claims}
    assert {"true:moved", "true:reordered", "true:param_name", "fake:moved", "swap"} <= kinds
    verbatim = {claim.excerpt: claim.claim_text for claim in claims if claim.kind == "true"}
    paraphrased = {(claim.kind.split(":")[1], claim.excerpt): claim.claim_text for claim in claims
                   if claim.kind.startswith("true:")}
    for claim in claims:
        if claim.kind.startswith(("true:", "fake:")) or claim.kind == "swap":
            cited = {inv.id: inv for inv in sessions[claim.session].invocations}[claim.invocation_id]
            assert claim.excerpt in cited.output_preview and claim.excerpt in verbatim  # the line, quoted as is
            assert claim.claim_text != verbatim[claim.excerpt]
        if claim.kind.startswith("fake:"):
            assert claim.claim_text != paraphrased[(claim.kind.split(":")[1], claim.excerpt)]


def test_the_split_halves_the_cases_for_good() -> None:
    tune = {session.case_id for session in bench.load_sessions(split="tune")}
    heldout = {session.case_id for session in bench.load_sessions(split="heldout")}
    everything = {session.case_id for session in bench.load_sessions()}
    assert tune and heldout and not tune & heldout and tune | heldout == everything
    assert all(bench.split_of(case) == "tune" for case in tune)


def test_the_twins_measure_what_loosening_costs(sample) -> None:
    # Without the restatement check, values swapped within the output go through: the hard classes see it.
    sessions, claims = sample
    hard = [claim for claim in claims if claim.kind == "swap" or claim.kind.startswith("fake:")]
    loose = Gatekeeper.with_overrides({"claim.entity_grounding": {"enabled": False}})
    assert bench.hard_catch(bench.evaluate(hard, sessions, loose)) < bench.hard_catch(bench.evaluate(hard, sessions))
