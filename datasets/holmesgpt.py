"""The HolmesGPT Verifier set: our labels joined with real Kubernetes tool outputs written by others.

The tool outputs are read at join time from the shared copy of the HolmesGPT eval fixtures
(``../shared/external/holmesgpt/holmesgpt_cases.jsonl``, Apache-2.0); only our labels
(``data/holmesgpt_labels.yaml``) and this script live in the repository.

Run ``python -m evigate.datasets.holmesgpt --out cases.jsonl`` to write the joined cases to a file of your choice,
or call :func:`load_holmesgpt_cases`. Set ``EVIGATE_HOLMESGPT_CASES`` to point at the upstream JSONL.
"""

from __future__ import annotations

import argparse
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from evigate.datasets.builder import CaseSpec, ClaimSpec, Evidence, build_case, stable_split
from evigate.datasets.fixtures import VerifierCase, write_jsonl
from evigate.errors import DatasetError
from evigate.signatures import ToolInvocation

HOLMESGPT_ENV = "EVIGATE_HOLMESGPT_CASES"
LABELS_PATH = Path(__file__).parent / "data" / "holmesgpt_labels.yaml"
_RELATIVE_UPSTREAM = Path("shared") / "external" / "holmesgpt" / "holmesgpt_cases.jsonl"


def upstream_path() -> Path:
    """Where the upstream JSONL is: ``$EVIGATE_HOLMESGPT_CASES``, else ``../shared/...`` beside the checkout or cwd."""
    configured = os.environ.get(HOLMESGPT_ENV)
    if configured:
        return Path(configured)
    for base in (Path(__file__).resolve().parents[2], Path.cwd().resolve().parent, Path.cwd().resolve()):
        candidate = base / _RELATIVE_UPSTREAM
        if candidate.exists():
            return candidate
    raise DatasetError(
        f"HolmesGPT cases not found: set {HOLMESGPT_ENV} to holmesgpt_cases.jsonl "
        f"(looked for ../{_RELATIVE_UPSTREAM} next to the checkout and the working directory)"
    )


def load_holmesgpt_cases(
    cases_path: str | Path | None = None, labels_path: str | Path = LABELS_PATH
) -> list[VerifierCase]:
    """Join labels with upstream tool outputs: per labelled case one clean input and one per perturbation."""
    return list(_load(str(cases_path or upstream_path()), str(labels_path)))


@lru_cache(maxsize=4)
def _load(cases_path: str, labels_path: str) -> tuple[VerifierCase, ...]:
    upstream = _read_upstream(Path(cases_path))
    labels = _read_labels(Path(labels_path))
    cases: list[VerifierCase] = []
    for entry in labels:
        name = entry["case"]
        if name not in upstream:
            raise DatasetError(f"{labels_path}: case {name!r} is not in {cases_path}")
        cases.extend(_variants(entry, upstream[name]))
    return tuple(cases)


def _read_upstream(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        raise DatasetError(f"HolmesGPT cases file {path} does not exist (set {HOLMESGPT_ENV})")
    records: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}:{number}: not JSON: {exc}") from exc
                records[record["case_id"]] = record
    return records


def _read_labels(path: Path) -> list[dict[str, Any]]:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DatasetError(f"{path}: cannot read labels: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise DatasetError(f"{path}: expected a mapping with a 'cases' list")
    return document["cases"]


def _invocations(record: dict[str, Any], session_id: str) -> list[ToolInvocation]:
    invocations = []
    for call in record["tool_invocations"]:
        failed = call.get("status") == "error"
        params = call.get("params")
        invocations.append(
            ToolInvocation(
                id=int(call["id"]),
                session_id=session_id,
                tool_name=call["tool_name"],
                input=params if isinstance(params, dict) else {"params": params},
                output_preview=call.get("output") or "",
                success=not failed,
                error=(call.get("error") or call.get("output") or "error") if failed else None,
            )
        )
    return invocations


def _query(record: dict[str, Any]) -> str:
    prompt = record.get("user_prompt")
    if isinstance(prompt, list):
        return " / ".join(str(turn) for turn in prompt)
    if prompt:
        return str(prompt)
    request = (record.get("investigation_input") or {}).get("investigate_request") or {}
    subject = request.get("subject") or {}
    parts = [request.get("title"), request.get("description"), subject.get("name") and f"subject: {subject['name']}"]
    return " ".join(str(part) for part in parts if part)


def _claim(raw: dict[str, Any], by_id: dict[int, ToolInvocation], where: str) -> ClaimSpec:
    evidence = []
    for item in raw["evidence"]:
        invocation_id = int(item["invocation"])
        invocation = by_id.get(invocation_id)
        if invocation is None or item["excerpt"] not in invocation.output_preview:
            # Every HolmesGPT claim quotes its evidence verbatim; a miss is a labelling mistake, not a scenario.
            quoted = item["excerpt"][:60]
            raise DatasetError(f"{where}: excerpt {quoted!r} is not in invocation {invocation_id}'s output")
        evidence.append(Evidence((invocation_id,), item["excerpt"]))
    return ClaimSpec(
        claim_id=raw["id"],
        claim_type=raw["type"],
        text=raw["text"],
        support_level=raw.get("support", "direct"),
        evidence=tuple(evidence),
        label=raw["label"],
        acceptable=tuple(raw.get("acceptable", ())),
        note=raw.get("note", ""),
    )


def _variants(entry: dict[str, Any], record: dict[str, Any]) -> list[VerifierCase]:
    name = entry["case"]
    short = name.split("/", 1)[-1]
    prefix = "hg-inv" if name.startswith("test_investigate/") else "hg-ask"
    session_id = f"holmesgpt:{name}"
    invocations = _invocations(record, session_id)
    by_id = {inv.id: inv for inv in invocations}
    claims = [_claim(raw, by_id, f"{name} {raw['id']}") for raw in entry["claims"]]
    split = stable_split(name)  # all variants of one upstream case share a split, so nothing leaks across splits
    base_tags = ["holmesgpt", *record.get("tags", [])]

    def variant(suffix: str, variant_claims: list[ClaimSpec], verdict: str, tags: list[str]) -> CaseSpec:
        return CaseSpec(
            case_id=f"{prefix}-{short}-{suffix}",
            source="holmesgpt",
            split=split,
            query=_query(record),
            session_id=session_id,
            invocations=invocations,
            claims=variant_claims,
            gold_verdict=verdict,
            tags=[*base_tags, *tags],
        )

    variants = [variant("clean", claims, entry["clean_verdict"], ["clean"])]
    for index, raw in enumerate(entry.get("perturbations", []), start=1):
        origin = next((c for c in claims if c.claim_id == raw["of"]), None)
        if origin is None:
            raise DatasetError(f"{name}: perturbation {index} modifies unknown claim {raw['of']!r}")
        evidence = origin.evidence
        if "evidence" in raw:
            evidence = _claim({**raw, "id": origin.claim_id, "type": origin.claim_type}, by_id, name).evidence
        perturbed = ClaimSpec(
            claim_id=origin.claim_id,
            claim_type=origin.claim_type,
            text=raw["text"],
            support_level=origin.support_level,
            evidence=evidence,
            label=raw["label"],
            acceptable=tuple(raw.get("acceptable", ())),
            note=raw.get("note", ""),
        )
        swapped = [perturbed if c.claim_id == origin.claim_id else c for c in claims]
        variants.append(variant(f"p{index}-{raw['kind']}", swapped, raw["verdict"], ["perturbed", raw["kind"]]))
    return [build_case(spec) for spec in variants]


def main(argv: list[str] | None = None) -> int:
    """``python -m evigate.datasets.holmesgpt [--cases PATH] [--out PATH]``: join and print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help=f"upstream holmesgpt_cases.jsonl (default: ${HOLMESGPT_ENV} or ../shared)")
    parser.add_argument("--labels", default=str(LABELS_PATH))
    parser.add_argument("--out", help="write the joined Verifier cases here as JSONL (keep it out of git)")
    args = parser.parse_args(argv)
    cases = load_holmesgpt_cases(args.cases, args.labels)
    if args.out:
        write_jsonl(args.out, cases)
    claims = sum(len(case.gold_labels) for case in cases)
    print(f"{len(cases)} Verifier inputs, {claims} labelled claims" + (f" -> {args.out}" if args.out else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
