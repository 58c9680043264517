"""Labelled fixture cases and their files: one case per YAML/JSON file, or one case per JSONL row.

The format is documented in ``datasets/README.md``. This module is pure pydantic + file reading (no DSPy), so
tooling that only inspects fixtures stays light.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evigate.datasets.labelling import case_view, is_labelled_session
from evigate.errors import DatasetError
from evigate.signatures import ClaimVerification, ComposerInput, ToolInvocation, Verdict, VerifierInput

Split = Literal["train", "dev", "test"]
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
FIXTURE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


class _Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(min_length=1, description="unique within its set, stable across regenerations")
    split: Split
    tags: list[str] = Field(default_factory=list, description="scenario tags, e.g. forged_invocation_id")
    notes: dict[str, str] = Field(default_factory=dict, description="why each label is what it is (GEPA feedback)")


class VerifierCase(_Case):
    """One Verifier input with everything needed to score a Verifier deterministically.

    ``invocations`` are the session's tool calls so a metric can re-run the Gatekeeper and the verdict matrix;
    ``gold_labels`` maps every claim id of the executor output to its correct verification; ``acceptable_labels``
    lists other verifications that are equally right for a claim (e.g. a forged-evidence claim may be judged
    ``unsupported`` or ``external_unknown``); ``gold_verdict`` is the verdict code must reach from gold labels.
    """

    source: Literal["demo_world", "holmesgpt", "own"] = Field(description="own: a team's labelled sessions")
    session_id: str
    verifier_input: VerifierInput
    invocations: list[ToolInvocation]
    gold_labels: dict[str, ClaimVerification]
    acceptable_labels: dict[str, list[ClaimVerification]] = Field(default_factory=dict)
    gold_verdict: Verdict

    @model_validator(mode="after")
    def _labels_cover_the_claims(self) -> VerifierCase:
        claim_ids = self.claim_ids()
        missing = [cid for cid in claim_ids if cid not in self.gold_labels]
        unknown = [cid for cid in self.gold_labels if cid not in claim_ids]
        stray = [cid for cid in self.acceptable_labels if cid not in self.gold_labels]
        if missing or unknown or stray:
            raise ValueError(
                f"gold_labels must label exactly the executor claims: unlabelled {missing}, unknown {unknown}, "
                f"acceptable_labels without a gold label {stray}"
            )
        foreign = [inv.id for inv in self.invocations if inv.session_id != self.session_id]
        if foreign:
            raise ValueError(f"invocations {foreign} belong to another session than {self.session_id!r}")
        return self

    def claim_ids(self) -> list[str]:
        """Claim ids of the executor output, in order (empty when the output is not a usable object)."""
        output = self.verifier_input.executor_structured_output or {}
        claims = output.get("claims") if isinstance(output, dict) else None
        if not isinstance(claims, list):
            return []
        return [str(claim.get("claim_id")) for claim in claims if isinstance(claim, dict) and "claim_id" in claim]

    def accepts(self, claim_id: str, verification: str) -> bool:
        """Whether ``verification`` is a right answer for ``claim_id``."""
        if verification == self.gold_labels.get(claim_id):
            return True
        return verification in self.acceptable_labels.get(claim_id, [])


class ComposerCase(_Case):
    """One Composer input with what a good answer must and must not contain.

    ``must_contain`` holds groups of alternatives: the answer must contain at least one string of every group
    (``["5.3 秒", "5.3秒", "5300ms"]``). ``must_not_contain`` strings must not appear at all.
    """

    composer_input: ComposerInput
    must_contain: list[list[str]] = Field(default_factory=list)
    must_not_contain: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _single_strings_are_groups(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("must_contain"), list):
            groups = [[item] if isinstance(item, str) else item for item in data["must_contain"]]
            data = {**data, "must_contain": groups}
        return data

    @model_validator(mode="after")
    def _groups_not_empty(self) -> ComposerCase:
        if any(not group or not all(alt.strip() for alt in group) for group in self.must_contain):
            raise ValueError("must_contain groups must hold at least one non-blank string")
        return self


CaseT = TypeVar("CaseT", bound=_Case)


def read_cases(path: str | Path, model: type[CaseT], *, mixed: bool = False) -> list[CaseT]:
    """Read every case under ``path`` (a fixture file or a directory of them, sorted by name).

    ``mixed`` reads a team's own fixtures (``--data``): Verifier cases, Composer cases and labelled sessions
    (``evigate label``) side by side, each document giving the cases of ``model`` it holds (see
    :func:`evigate.datasets.labelling.case_view`). Raises :class:`DatasetError` naming the file, the line (of the
    JSONL row, or of the field in a YAML file) and the field of the first invalid case, and when two cases share a
    case_id.
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"fixture path {path} does not exist")
    files = sorted(p for p in path.rglob("*") if p.suffix in FIXTURE_SUFFIXES) if path.is_dir() else [path]
    kind = "verifier" if model is VerifierCase else "composer"
    cases: list[CaseT] = []
    seen: dict[str, str] = {}
    for file in files:
        for where, raw, text in _raw_cases(file):
            prefix = ("composer",) if mixed and kind == "composer" and is_labelled_session(raw) else ()
            if mixed:
                try:
                    raw = case_view(raw, kind, where)
                except DatasetError as exc:
                    raise DatasetError(_with_line(str(exc), text, file)) from exc
                if raw is None:
                    continue
            try:
                case = model.model_validate(raw)
            except ValidationError as exc:
                where = _at_field(where, text, file, exc, prefix)
                raise DatasetError(f"{where}: invalid {model.__name__}: {_first_errors(exc)}") from exc
            if case.case_id in seen:
                raise DatasetError(f"{where}: case_id {case.case_id!r} already defined in {seen[case.case_id]}")
            seen[case.case_id] = where
            cases.append(case)
    return cases


def _at_field(where: str, text: str, file: Path, exc: ValidationError, prefix: tuple[str, ...] = ()) -> str:
    """``file:line`` of the first invalid field in a YAML file (a JSONL ``where`` already names its line)."""
    if file.suffix not in (".yaml", ".yml") or not exc.errors():
        return where
    line = field_line(text, (*prefix, *(str(part) for part in exc.errors()[0]["loc"])))
    return f"{where}:{line}" if line else where


def _with_line(message: str, text: str, file: Path) -> str:
    """A "not labelled yet" message with the line of its first empty field, for YAML files."""
    match = re.search(r"not labelled yet: ([\w.-]+)", message)
    if file.suffix not in (".yaml", ".yml") or match is None:
        return message
    line = field_line(text, tuple(match.group(1).split(".")))
    where, _, rest = message.partition(": ")
    return f"{where}:{line}: {rest}" if line else message


def field_line(text: str, path: tuple[str, ...]) -> int | None:
    """The 1-based line of the value at ``path`` (keys and list indexes) in a YAML document, or of the deepest
    mapping on the way that exists; None when the text is no YAML mapping."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = next(((key, value) for key, value in node.value if key.value == part), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line


def write_jsonl(path: str | Path, cases: Iterable[BaseModel]) -> int:
    """Write cases one per line (UTF-8, keys in model order, no ASCII escaping); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for case in cases:
            handle.write(json.dumps(case.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False))
            handle.write("\n")
            count += 1
    return count


def _raw_cases(file: Path) -> Iterator[tuple[str, Any, str]]:
    """(where, raw case, its text) for every case of a fixture file."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{file}: cannot read fixture file: {exc}") from exc
    if file.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield f"{file}:{number}", _decode(lambda line=line: json.loads(line), f"{file}:{number}"), line
        return
    loader = json.loads if file.suffix == ".json" else yaml.safe_load
    yield str(file), _decode(lambda: loader(text), str(file)), text


def _decode(load: Any, where: str) -> Any:
    try:
        value = load()
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise DatasetError(f"{where}: not valid JSON/YAML: {exc}") from exc
    if not isinstance(value, dict):
        raise DatasetError(f"{where}: a fixture case must be a mapping, got {type(value).__name__}")
    return value


def _first_errors(exc: ValidationError, limit: int = 3) -> str:
    parts = []
    for error in exc.errors()[:limit]:
        location = ".".join(str(item) for item in error["loc"]) or "(case)"
        parts.append(f"{location}: {error['msg']}")
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
