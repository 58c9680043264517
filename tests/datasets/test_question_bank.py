"""The question bank (issue 18): its shape, its splits by phrasing family, and agreement with the world's truth."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from evigate.datasets.questions import load_questions, read_question_bank
from evigate.demo.catalog import ERROR_CODES, INCIDENTS, incident_by_id
from evigate.demo.entities import extract_query_entities
from evigate.demo.orders import ANCHOR_ORDER_IDS
from evigate.errors import DatasetError


def test_every_incident_has_twenty_questions_in_both_languages() -> None:
    questions = load_questions()
    assert len(questions) >= 160
    per_incident = Counter(q.incident for q in questions)
    for incident in INCIDENTS:
        assert per_incident[incident.incident_id] >= 20, incident.incident_id
        locales = {q.locale for q in questions if q.incident == incident.incident_id}
        assert locales == {"zh", "en"}, incident.incident_id
    assert per_incident[None] >= 20


def test_no_family_crosses_splits_and_every_split_has_answerable_and_unanswerable_questions() -> None:
    questions = load_questions()
    splits_of: dict[str, set[str]] = defaultdict(set)
    for question in questions:
        splits_of[question.family].add(question.split)
    assert all(len(splits) == 1 for splits in splits_of.values())
    for split in ("train", "dev", "test"):
        chosen = load_questions(split=split)
        assert {q.split for q in chosen} == {split}
        assert any(q.incident is None for q in chosen) and any(q.incident for q in chosen)
        # every incident is asked about in every split, so no split measures only some incidents
        assert {q.incident for q in chosen if q.incident} == {i.incident_id for i in INCIDENTS}


def test_families_group_several_questions_across_incidents() -> None:
    by_family: dict[str, list] = defaultdict(list)
    for question in load_questions():
        by_family[question.family].append(question)
    for family, members in by_family.items():
        assert len(members) >= 4, family
        assert len({q.text for q in members}) == len(members), f"{family}: duplicate texts"
        if all(q.incident for q in members):
            assert len({q.incident for q in members}) >= 4, family


def test_named_entities_agree_with_the_world() -> None:
    """A code, order or trace a question names is its incident's own; a named time falls near its window.

    (Services are not checked: a wrong guess names services on purpose, and "网关" is ambiguous.)
    """
    from evigate.demo.domain import demo_domain
    from evigate.rules.text.spelling import read_names

    slack = timedelta(minutes=30)
    vocabulary = demo_domain().entity_vocabulary()
    for question in load_questions():
        # as the program reads it: a misspelt code ("ERR_DEADLOK", typo-mixed) is read as the domain's
        entities = extract_query_entities(read_names(question.text, vocabulary).read_as)
        if question.incident is None:
            assert not set(entities["order_ids"]) & ANCHOR_ORDER_IDS, question.id
            continue
        incident = incident_by_id(question.incident)
        for code in entities["error_codes"]:
            assert code == incident.error_code, (question.id, code)
        for order in entities["order_ids"]:
            assert order == incident.anchor_order_id, (question.id, order)
        for trace in entities["trace_ids"]:
            assert trace == incident.anchor_trace_id, (question.id, trace)
        for named in entities["times"]:
            moment = datetime.fromisoformat(named)
            # "四点半" with no 下午 is read as 04:30: operators drop the half of the day, so either half may be meant
            assert any(incident.start - slack <= at <= incident.end + slack
                       for at in (moment, moment + timedelta(hours=12))), (question.id, named)


def test_unanswerable_questions_name_no_known_error_code_of_an_incident() -> None:
    incident_codes = {incident.error_code for incident in INCIDENTS}
    for question in load_questions():
        if question.incident is None:
            named = set(extract_query_entities(question.text)["error_codes"])
            assert not named & incident_codes, question.id
            assert not named & set(ERROR_CODES) - {"ERR_KAFKA_LAG"}, question.id


def test_filters_by_locale_and_incident() -> None:
    english = load_questions(split="dev", locale="en")
    assert english and all(q.locale == "en" and q.split == "dev" for q in english)
    none = load_questions(incidents=[None])
    assert none and all(q.incident is None for q in none)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("families: {f: {split: train, about: x}}\nquestions:\n"
         "- {id: a, text: t, locale: zh, incident: null, family: f, split: dev}\n", "never crosses splits"),
        ("families: {f: {split: train, about: x}}\nquestions:\n"
         "- {id: a, text: t, locale: zh, incident: null, family: g, split: train}\n", "unknown family"),
        ("families: {f: {split: train, about: x}}\nquestions:\n"
         "- {id: a, text: t, locale: zh, incident: null, family: f, split: train}\n"
         "- {id: a, text: u, locale: en, incident: null, family: f, split: train}\n", "duplicate question ids"),
        ("families: {f: {split: train, about: x}}\nquestions:\n"
         "- {id: a, text: t, locale: fr, incident: null, family: f, split: train}\n", "locale"),
        ("questions: [oops\n", "cannot read"),
    ],
)
def test_an_invalid_bank_fails_with_the_file_and_the_reason(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bank.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=message) as caught:
        read_question_bank(path)
    assert str(path) in str(caught.value)


def test_an_unknown_incident_id_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bank.yaml"
    path.write_text("families: {f: {split: train, about: x}}\nquestions:\n"
                    "- {id: a, text: t, locale: zh, incident: INC-19990101-01, family: f, split: train}\n",
                    encoding="utf-8")
    with pytest.raises(DatasetError, match="INC-19990101-01"):
        load_questions(path=path)
