"""Errors in a team's YAML fixtures name the line of the field: `field_line` finds every key of any document."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.datasets.fixtures import field_line

_KEYS = st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True).filter(lambda key: key not in ("y", "n", "on", "no"))
_LEAVES = st.one_of(st.none(), st.integers(), st.text(max_size=20), st.booleans())
_DOCUMENTS = st.recursive(
    st.dictionaries(_KEYS, _LEAVES, min_size=1, max_size=4),
    lambda children: st.dictionaries(_KEYS, st.one_of(_LEAVES, children, st.lists(children, max_size=2)),
                                     min_size=1, max_size=4),
    max_leaves=12,
)


def _paths(value: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append((*prefix, key))
            found.extend(_paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.extend(_paths(child, (*prefix, str(index))))
    return found


@settings(max_examples=60, deadline=None)
@given(_DOCUMENTS, st.sampled_from([False, True]))
def test_every_key_is_found_on_its_own_line(document: dict, sorted_keys: bool) -> None:
    text = yaml.safe_dump(document, allow_unicode=True, sort_keys=sorted_keys)
    lines = text.splitlines()
    for path in _paths(document):
        line = field_line(text, path)
        assert line is not None, (path, text)
        key = path[-1]
        assert lines[line - 1].lstrip(" -").startswith((f"{key}:", f"'{key}':", f'"{key}":')), (path, line, text)


def test_a_missing_field_points_at_the_deepest_mapping_found_and_garbage_at_nothing() -> None:
    text = "split: dev\ngold_labels:\n  claim-1: direct_observation\n"
    assert field_line(text, ("gold_labels", "claim-9")) == 2
    assert field_line(text, ("nope",)) is None
    assert field_line("a: [unclosed", ("a",)) is None
