"""The one drift test of the thresholds (issue 21): every heuristic threshold of the deterministic core is configured
in ``rules/thresholds.yaml`` (or, for a rule's parameter, its ``rules/metadata`` YAML), never written in code, and
what the docs state is the configured value.

What code may still write as a number: the cost and size bounds listed in ``LIMITS`` (how much work or text, never
what counts as shown, quoted or similar), exact constants (unit factors, float tolerances) and 0 / 1.
"""

from __future__ import annotations

import ast
import json
import pathlib
import re
from collections.abc import Iterator

import pytest
import yaml

from evigate.errors import RuleConfigError
from evigate.rules.thresholds import THRESHOLDS, parse_thresholds

ROOT = pathlib.Path(__file__).resolve().parents[2]
RULES = ROOT / "rules"

LIMITS: dict[str, set[str]] = {
    "builtin/misattribution.py": {"MAX_CANDIDATES", "MAX_PROBE_TOKENS"},  # other invocations probed, tokens each
    "builtin/schema_executor_v2.py": {"MAX_ERRORS_PER_ITEM"},  # findings reported per malformed item
    "engine/gatekeeper.py": {"MAX_ERRORS", "MAX_MESSAGE_CHARS", "SESSION_CACHE_SIZE", "VIEW_CACHE_SIZE"},
    "gate/parsing.py": {"MAX_CANDIDATES"},  # JSON candidates tried in one model output
    "gate/session.py": {"MAX_FLATTEN_CHARS", "MAX_EVIDENCE_NAMED", "MAX_NAME_CHARS"},  # details searched; names read
    "gate/spans.py": {"MAX_SPANS"},  # binding spans recorded
    "grounding/binding.py": {"MAX_TOKENS_PER_SENTENCE", "MAX_POSTINGS"},  # index sizes
    "grounding/case.py": {"MAX_CLAIMS", "PREVIEW_CHARS"},  # sentences judged; text shown of an unchecked part
    "grounding/sentences.py": {"MAX_ANSWER_CHARS", "MAX_SENTENCE_CHARS"},  # text split
    "text/junk.py": {"_PREFIX_CHARS", "_SCANNED_OCCURRENCES"},  # word-start index size; finds scanned before it
    "text/normalize.py": {"MAX_EXCERPT_CHARS", "MAX_TRUNCATION_NEEDLE"},  # alignment cost on hostile input
    "text/occurrence.py": {"MAX_OCCURRENCES"},  # occurrences scanned per entity
    "verdict/anchor_observations.py": {"MAX_TIES_COMPARED"},  # equally good lines compared
    "verdict/retry.py": {"MAX_GAP_CHARS"},  # characters of a claim quoted in a retry gap
}
"""Cost and size bounds: they bound work or text, they decide nothing about evidence."""

EXACT: dict[str, set[float]] = {
    "text/numbers.py": {0.001, 1e-06, 60.0, 3600.0, 86400.0, 1024.0, 1e-09},  # unit factors, float tolerance
    "text/occurrence.py": {1e-09},  # float tolerance
    "text/times/stamps.py": {0.001, 60.0, 3600.0, 86400.0, 604800.0, 1e-09},  # seconds per unit, float tolerance
    # A tie-break (a wider span loses by 0.01 per sentence), not a threshold.
    "grounding/binding.py": {0.01},
}
"""Floats that are exact constants, not judgement."""
EXACT_TABLES: dict[str, set[str]] = {
    "text/times/stamps.py": {"_UNIT_SECONDS"}, "text/times/phrases.py": {"_DAY_OFFSETS", "_MINUTE_WORDS"},
}
"""Named tables of exact constants (seconds per duration unit, days from today of "明天" / "前天", minutes of
"twenty" / "thirty")."""


def _numeric(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _numeric_literal(node: ast.AST) -> bool:
    """A number, or a dict / tuple / list of numbers only (a weight table)."""
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_numeric(value) for value in node.values)
    if isinstance(node, ast.Tuple | ast.List):
        return bool(node.elts) and all(_numeric(item) for item in node.elts)
    return _numeric(node)


def _findings(path: pathlib.Path) -> Iterator[str]:
    relative = path.relative_to(RULES).as_posix()
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (isinstance(target, ast.Name) and target.id.lstrip("_").isupper()
                        and _numeric_literal(node.value) and target.id not in LIMITS.get(relative, set())
                        and target.id not in EXACT_TABLES.get(relative, set())):
                    yield f"rules/{relative}:{node.lineno}: {target.id} = {ast.unparse(node.value)}"
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Field":
            # A rule parameter's value is its metadata YAML's; a default in code would shadow a missing key.
            for keyword in node.keywords:
                if keyword.arg == "default" and _numeric(keyword.value):
                    yield f"rules/{relative}:{node.lineno}: Field(default={ast.unparse(keyword.value)})"
        elif (isinstance(node, ast.Constant) and isinstance(node.value, float) and node.value not in (0.0, 1.0)
              and node.value not in EXACT.get(relative, set())):
            yield f"rules/{relative}:{node.lineno}: {node.value}"


def test_no_threshold_is_written_in_code() -> None:
    found = [finding for path in sorted(RULES.rglob("*.py")) if path.name != "thresholds.py"
             for finding in _findings(path)]
    assert not found, "put these in rules/thresholds.yaml (or list a pure cost bound in LIMITS):\n" + "\n".join(found)


def test_every_listed_limit_still_exists() -> None:
    for relative, names in LIMITS.items():
        text = (RULES / relative).read_text("utf-8")
        for name in names:
            assert re.search(rf"^{name}\b[^=\n]*= *\d", text, re.MULTILINE), f"rules/{relative}: no {name} any more"


WORDS = {"half": 0.5, "three": 3, "five": 5}

DOCUMENTED: list[tuple[str, str, float]] = [
    ("confirmation.md", r"weighs at least (\d+)", THRESHOLDS.confirmation.min_confirm_weight),
    ("confirmation.md", r"of weight ≥ (\d+), is held by", THRESHOLDS.confirmation.min_confirm_weight),
    ("confirmation.md", r"weight ≥ (\d+) copied from the Executor's own prompt",
     THRESHOLDS.junk_claims.min_copied_weight),
    ("confirmation.md", r"keeps at least (half) the excerpt's\s+weight", THRESHOLDS.junk_claims.min_kept_share),
    ("confirmation.md", r"cut at a space past (\d+) characters", THRESHOLDS.junk_claims.max_excerpt_chars),
    ("confirmation.md", r"bare numbers of (three) or more digits", THRESHOLDS.anchor_observations.min_id_digits),
    ("confirmation.md", r"at most \*\*(\d+)\*\* such lines per round", THRESHOLDS.anchor_observations.max_observations),
    ("rules.md", r"Blocks lighter than (five) units", THRESHOLDS.text.min_block_weight),
    ("rules.md", r"matches within (\d+)%", round(100 * THRESHOLDS.text.approximate_tolerance)),
]
"""(doc, what it says with the value as group 1, the configured value)."""


@pytest.mark.parametrize(("doc", "pattern", "configured"), DOCUMENTED)
def test_the_docs_state_the_configured_value(doc: str, pattern: str, configured: float) -> None:
    text = re.sub(r"[ \t]*\n[ \t]*", " ", (ROOT / "docs" / doc).read_text("utf-8"))  # a phrase may wrap
    stated = [match.group(1) for match in re.finditer(pattern, text)]
    assert stated, f"docs/{doc} no longer says /{pattern}/: update DOCUMENTED"
    for value in stated:
        assert float(WORDS.get(value) or value) == float(configured), (
            f"docs/{doc} says {value} where rules/thresholds.yaml has {configured}")


def test_the_rules_reference_lists_every_configured_threshold() -> None:
    rows = dict(re.findall(r"^\| `([a-zA-Z]+\.[a-zA-Z]+)` \| `([^`]*)` \|", (ROOT / "docs" / "rules.md").read_text(
        "utf-8"), re.MULTILINE))
    document = yaml.safe_load((RULES / "thresholds.yaml").read_text("utf-8"))
    configured = {f"{section}.{key}": value for section, values in document.items() for key, value in values.items()}
    assert set(rows) == set(configured)
    for name, value in configured.items():
        assert json.loads(rows[name]) == value, f"docs/rules.md: {name} = {rows[name]}, configured {value}"


def test_a_misspelt_or_missing_threshold_is_an_error() -> None:
    document = yaml.safe_load((RULES / "thresholds.yaml").read_text("utf-8"))
    document["confirmation"]["minConfirmWeigth"] = document["confirmation"].pop("minConfirmWeight")
    with pytest.raises(RuleConfigError, match="minConfirmWeight"):
        parse_thresholds(document)
