"""The Composer cases built from code-only sessions of the question bank: reproducible, split as the bank, and
consistent with the answer the deterministic renderer gives for their own input."""

from __future__ import annotations

import pytest

from evigate.datasets.build_composer_fixtures import bank_case, bank_cases, case_text
from evigate.datasets.loaders import COMPOSER_FIXTURES, load_composer_cases
from evigate.datasets.questions import load_questions
from evigate.rules.answer.render import render_deterministic
from evigate.signatures import ComposerInput


def _bank_cases() -> list:
    return [case for case in load_composer_cases() if case.case_id.startswith("bank-")]


def test_every_question_of_the_bank_has_its_case_with_the_questions_split() -> None:
    questions = {question.id: question for question in load_questions()}
    cases = {case.case_id.removeprefix("bank-"): case for case in _bank_cases()}
    assert set(cases) == set(questions)
    assert [qid for qid, case in cases.items() if case.split != questions[qid].split] == []
    assert all(questions[qid].family in case.tags and questions[qid].locale in case.tags for qid, case in cases.items())


def test_composer_dev_and_test_sets_hold_thirty_cases_or_more() -> None:
    assert len(load_composer_cases(split="dev")) >= 30
    assert len(load_composer_cases(split="test")) >= 30


@pytest.mark.parametrize("locale", ["zh", "en"])
def test_the_renderer_answer_of_each_case_satisfies_its_own_must_and_must_not(locale: str) -> None:
    for case in _bank_cases():
        text = render_deterministic(case.composer_input, locale=locale)
        assert all(any(key in text for key in group) for group in case.must_contain), case.case_id
        assert [key for key in case.must_not_contain if key in text] == [], case.case_id


def test_another_incidents_code_is_forbidden_and_the_tool_name_is_no_must() -> None:
    question = next(q for q in load_questions() if q.incident == "INC-20261128-02")
    composer_input = ComposerInput(
        original_query=question.text, verdict="PASS",
        allowed_claims=[{"claim_id": "observed-1", "claim_type": "symptom", "support_level": "direct",
                         "claim_text": "query_order returned: order 456: status=FAILED error_code=ERR_SMS_PROVIDER"}])
    case = bank_case(question, composer_input)
    assert case.must_contain == [["ERR_SMS_PROVIDER"]]
    assert "ERR_DB_POOL_EXHAUSTED" in case.must_not_contain and "ERR_SMS_PROVIDER" not in case.must_not_contain


def test_rebuilding_a_few_cases_gives_the_committed_files_byte_for_byte() -> None:
    by_split: dict[str, list] = {}
    for question in load_questions():
        by_split.setdefault(question.split, []).append(question)
    chosen = [questions[index] for questions in by_split.values() for index in (0, -1)]
    for case in bank_cases(chosen):
        assert case_text(case) == (COMPOSER_FIXTURES / f"{case.case_id}.yaml").read_text(encoding="utf-8")
