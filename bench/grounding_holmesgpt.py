"""Benchmark: does the Gatekeeper catch fabricated claims about real Kubernetes tool outputs, and spare true ones?

Data: the visible HolmesGPT eval fixtures (../shared/external/holmesgpt/holmesgpt_cases.jsonl, Apache-2.0: real
kubectl, Prometheus and log outputs written by others; read in place, never copied). For every successful tool
output, a generator picks lines by code (deterministic seed) and writes a TRUE claim from each: an attribution
("kubectl_describe 的输出显示：…", "According to fetch_pod_logs, …"; zh and en) followed by the line itself,
bound to its invocation with the line as a verbatim excerpt. From each true claim it derives perturbations, one
per class that applies to the line:

- number: one number changed (kept in its format and unit), in the claim only or in claim and excerpt;
- name: a kebab/snake-case name or namespace replaced by a name from another HolmesGPT case;
- reason: a Kubernetes reason/status (CamelCase, or the value of Status:/Reason:/State:) swapped for another
  reason seen anywhere in the data set;
- id: a hex id, hash suffix or IP address with one or two characters changed;
- tool: the binding names another tool of the session than the one that ran;
- misattribution: the claim and its excerpt bound to another invocation of the session.

Beside them (bench/holmesgpt_paraphrases.py): true paraphrases as people write them (``true:<form>``: a name moved
from another line, a column left out beside it, an owner for its pod, compound tokens split, columns reordered, a
name from the query or the call's arguments, zh/en mixed, units restated), each with a fabricated twin
(``fake:<form>``), and in-output swaps (``swap``: a value replaced by one of the same shape from another line of
the same output). The catch-rate target is stated on the six classes above; swaps and twins are reported apart, as
what loosening the gate costs. ``--split tune|heldout`` takes a fixed half of the cases (the rules were tuned on
``tune`` only).

Targets are found by the generator's own simple patterns, not by the Gatekeeper's entity reader. A fabricated
claim is caught when any fail-level rule targets it (it can never be shown as confirmed); a true claim is a false
alarm when one does. Every claim is validated on its own against all of its case's invocations.

Run:  python bench/grounding_holmesgpt.py [--cases PATH] [--seed 13] [--lines-per-output 2] [--limit-cases N]
      [--split tune|heldout|all] [--examples N]
No model is involved: the figures are the deterministic Gatekeeper's (any machine gives the same numbers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evigate.datasets.holmesgpt import HOLMESGPT_ENV, upstream_path
from evigate.errors import DatasetError
from evigate.rules import Gatekeeper, parse_executor_output
from evigate.signatures import ToolInvocation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from holmesgpt_paraphrases import Line, in_output_swap, is_true, kinds_in_order, paraphrases

CLASSES = ("number", "name", "reason", "id", "tool", "misattribution")
"""The perturbations the catch-rate target is stated on."""
HARD_CLASSES = ("swap",)
"""In-output swaps: a value replaced by one of the same shape from another line of the same output. With the
fabricated paraphrases (``fake:<form>``) they are reported apart: they measure what loosening the gate costs."""
SPLITS = ("tune", "heldout", "all")
TARGET_CATCH = 0.97
TARGET_FALSE_ALARM = 0.02
TEMPLATES = (
    "{tool} 的输出显示：{span}",
    "根据 {tool} 的结果，{span}",
    "According to {tool}, {span}",
    "The {tool} output shows: {span}",
)
MIN_LINE, MAX_LINE, MAX_SPAN = 16, 400, 180

_NUMBER = re.compile(r"(?<![\w.:/-])\d+(?:\.\d+)?(?=(?:[A-Za-z%]{0,3})(?![\w.]))")
_NAME = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w-])")
_NAMESPACE_VALUE = re.compile(r"(?:Namespace|namespace):\s+([a-z][a-z0-9-]*)")
_REASON_VALUE = re.compile(r"(?:Reason|Status|State|Phase|reason|status|phase)[\"']?:\s+[\"']?([A-Z][A-Za-z]{3,})")
_CAMEL = re.compile(r"(?<![A-Za-z0-9_])(?:[A-Z]{2,}(?=[A-Z][a-z]))?[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+(?![A-Za-z0-9_])")
_HEX_ID = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{5,}(?![0-9A-Za-z])")
_IPV4 = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")
_SEPARATOR_LINE = re.compile(r"^[\s=\-_*#|+.]*$")


@dataclass(frozen=True)
class Session:
    """One upstream HolmesGPT case as a diagnosis session: its query and recorded invocations."""

    case_id: str
    session_id: str
    query: str
    invocations: tuple[ToolInvocation, ...]


@dataclass(frozen=True)
class GroundingClaim:
    """One generated claim: ``kind`` is "true" or a perturbation class; it cites ``invocation_id`` as ``tool``."""

    session: int
    kind: str
    claim_text: str
    excerpt: str
    invocation_id: int
    tool_name: str
    origin: str = field(default="", compare=False)


def split_of(case_id: str) -> str:
    """"tune" or "heldout": a fixed half of the upstream cases by a hash of the case id (rules were tuned on the
    "tune" half only; the "heldout" half tells whether the tuning generalises)."""
    return "tune" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "heldout"


def load_sessions(path: str | Path | None = None, limit: int | None = None, split: str = "all") -> list[Session]:
    """The upstream cases with at least one successful, non-empty tool output (of one split, or all)."""
    source = Path(path) if path else upstream_path()
    if not source.exists():
        raise DatasetError(f"HolmesGPT cases file {source} does not exist (set {HOLMESGPT_ENV})")
    sessions: list[Session] = []
    with source.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            session_id = f"holmesgpt:{record['case_id']}"
            invocations = tuple(_invocation(call, session_id) for call in record.get("tool_invocations", []))
            if split != "all" and split_of(record["case_id"]) != split:
                continue
            if any(inv.success and inv.output_preview.strip() for inv in invocations):
                prompt = record.get("user_prompt")
                query = " / ".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt or "")
                sessions.append(Session(record["case_id"], session_id, query, invocations))
            if limit is not None and len(sessions) >= limit:
                break
    return sessions


def _invocation(call: dict[str, Any], session_id: str) -> ToolInvocation:
    failed = call.get("status") == "error"
    params = call.get("params")
    return ToolInvocation(
        id=int(call["id"]), session_id=session_id, tool_name=call["tool_name"],
        input=params if isinstance(params, dict) else {"params": params},
        output_preview=call.get("output") or "", success=not failed,
        error=(call.get("error") or call.get("output") or "error") if failed else None,
    )


# -- the generator --------------------------------------------------------------------------------------------------


def _candidate_lines(output: str) -> list[str]:
    lines = []
    for raw in output.splitlines():
        line = raw.strip()
        if MIN_LINE <= len(line) <= MAX_LINE and not _SEPARATOR_LINE.match(line) and re.search(r"[A-Za-z]{3}", line):
            lines.append(line[:MAX_SPAN].rsplit(" ", 1)[0] if len(line) > MAX_SPAN else line)
    return list(dict.fromkeys(lines))


@dataclass
class Pools:
    """Replacement material drawn from the whole data set: names, reasons."""

    names: dict[str, set[str]]
    reasons: set[str]


def build_pools(sessions: Sequence[Session]) -> Pools:
    names: dict[str, set[str]] = defaultdict(set)
    reasons: set[str] = set()
    for session in sessions:
        for invocation in session.invocations:
            text = invocation.output_preview
            names[session.case_id].update(_NAME.findall(text))
            names[session.case_id].update(_NAMESPACE_VALUE.findall(text))
            reasons.update(_REASON_VALUE.findall(text))
            reasons.update(_CAMEL.findall(text))
    return Pools(dict(names), reasons)


def _reason_targets(span: str, pools: Pools) -> list[re.Match[str]]:
    return [m for m in re.finditer(r"(?<![A-Za-z0-9_:])[A-Z][A-Za-z]{3,}(?![A-Za-z0-9_])", span)
            if m.group(0) in pools.reasons]


def _changed_number(token: str, rng: random.Random) -> str:
    digits = re.match(r"\d+(?:\.\d+)?", token)
    assert digits is not None
    number, suffix = digits.group(0), token[digits.end():]
    if "." in number:
        whole, fraction = number.split(".")
        changed = f"{int(whole) + rng.randint(1, 9)}.{fraction}"
    else:
        value = int(number)
        step = rng.choice((1, 2, 3, 5, 7)) if value < 20 else max(1, int(value * rng.uniform(0.05, 0.4)))
        changed = str(value + step if value < step or rng.random() < 0.5 else value - step)
        changed = changed.zfill(len(number)) if number.startswith("0") and len(number) > 1 else changed
    return changed + suffix


def _mutated_id(token: str, rng: random.Random) -> str:
    chars = list(token)
    positions = [i for i, char in enumerate(chars) if char.isalnum()]
    for index in rng.sample(positions, min(len(positions), rng.choice((1, 2)))):
        alphabet = "0123456789" if chars[index].isdigit() else "abcdef"
        chars[index] = rng.choice([c for c in alphabet if c != chars[index]])
    return "".join(chars)


def _replace(text: str, match: re.Match[str], new: str) -> str:
    return text[:match.start()] + new + text[match.end():]


def _value_perturbation(
    kind: str, span: str, excerpt_is_span: bool, rng: random.Random, session: Session, pools: Pools, session_text: str
) -> tuple[str, str] | None:
    """(claim span, excerpt) with one value of class ``kind`` changed, or None when the line has no such value."""
    if kind == "number":
        targets = list(_NUMBER.finditer(span))
        new_of = lambda m: _changed_number(m.group(0), rng)  # noqa: E731
    elif kind == "name":
        targets = [m for m in _NAME.finditer(span) if not _HEX_ID.fullmatch(m.group(0))]
        foreign = sorted({name for case, names in pools.names.items() if case != session.case_id for name in names
                          if name not in session_text})
        if not foreign:
            return None
        new_of = lambda m: rng.choice(foreign)  # noqa: E731
    elif kind == "reason":
        targets = _reason_targets(span, pools)
        new_of = lambda m: rng.choice(sorted(pools.reasons - {m.group(0)}))  # noqa: E731
    else:  # id
        targets = [*(_HEX_ID.finditer(span)), *(_IPV4.finditer(span))]
        new_of = lambda m: _mutated_id(m.group(0), rng)  # noqa: E731
    if not targets:
        return None
    target = rng.choice(targets)
    new = new_of(target)
    if new == target.group(0) or (kind in ("name", "id") and new in session_text):
        return None
    claim_span = _replace(span, target, new)
    # Half of the forgeries also alter the quote, as a model that invents a value tends to.
    excerpt = claim_span if excerpt_is_span and rng.random() < 0.5 else span
    return claim_span, excerpt


def _claim_maker(session: int, invocation: ToolInvocation, template: str) -> Any:
    """A function building claims about one line of ``invocation`` (bound to it unless told otherwise)."""

    def claim(kind: str, text: str, excerpt: str, target: ToolInvocation = invocation,
              tool: str | None = None) -> GroundingClaim:
        return GroundingClaim(session, kind, template.format(tool=invocation.tool_name, span=text), excerpt,
                              target.id, tool or target.tool_name, invocation.tool_name)

    return claim


def generate(sessions: Sequence[Session], seed: int = 13, lines_per_output: int = 2) -> list[GroundingClaim]:
    """True claims and their perturbations, deterministic for a seed."""
    rng = random.Random(seed)
    pools = build_pools(sessions)
    claims: list[GroundingClaim] = []
    for number, session in enumerate(sessions):
        session_text = "\n".join(inv.output_preview for inv in session.invocations)
        usable = [inv for inv in session.invocations if inv.success and inv.output_preview.strip()]
        for invocation in usable:
            lines = _candidate_lines(invocation.output_preview)
            for span in rng.sample(lines, min(lines_per_output, len(lines))):
                template = rng.choice(TEMPLATES)
                claim = _claim_maker(number, invocation, template)

                claims.append(claim("true", span, span))
                claims.extend(_paraphrased(number, claim, span, invocation, session, pools, session_text, seed))
                for kind in ("number", "name", "reason", "id"):
                    changed = _value_perturbation(kind, span, True, rng, session, pools, session_text)
                    if changed is not None:
                        claims.append(claim(kind, *changed))
                others = [inv for inv in session.invocations if inv.tool_name != invocation.tool_name]
                if others:
                    claims.append(claim("tool", span, span, tool=rng.choice(others).tool_name))
                foreign = [inv for inv in session.invocations
                           if inv.id != invocation.id and inv.success and span not in inv.output_preview]
                if foreign:
                    claims.append(claim("misattribution", span, span, target=rng.choice(foreign)))
    return claims


def _paraphrased(
    number: int, claim: Any, span: str, invocation: ToolInvocation, session: Session, pools: Pools,
    session_text: str, seed: int,
) -> list[GroundingClaim]:
    """The line's in-output swap (a fabrication), its true paraphrases and their fabricated twins, all quoting the
    line verbatim. Their own random stream, so the verbatim claims stay those of earlier releases."""
    rng = random.Random(f"{seed}:{session.case_id}:{invocation.id}:{span}")
    output = invocation.output_preview
    made: list[GroundingClaim] = []
    swapped = in_output_swap(span, output, rng)
    if swapped is not None:
        made.append(claim("swap", swapped, span))

    def changed(stream: random.Random) -> str | None:
        inside = in_output_swap(span, output, stream)
        if inside is not None:
            return inside
        for kind in stream.sample(("number", "name", "reason", "id"), 4):
            perturbed = _value_perturbation(kind, span, False, stream, session, pools, session_text)
            if perturbed is not None:
                return perturbed[0]
        return None

    line = Line(span, output, dict(invocation.input or {}), session.query)
    for kind, text in paraphrases(line, rng, changed):
        made.append(GroundingClaim(number, kind, text, span, invocation.id,
                                   invocation.tool_name, invocation.tool_name))
    return made


# -- running the gate -----------------------------------------------------------------------------------------------


def executor_output(claim: GroundingClaim) -> dict[str, Any]:
    return {
        "answer_version": "executor_evidence_v2",
        "claims": [{
            "claim_id": "c1", "claim_type": "symptom", "claim_text": claim.claim_text, "support_level": "direct",
            "evidence_bindings": [{
                "source_type": "tool_trace", "source_id": None, "tool_name": claim.tool_name,
                "source_invocation_ids": [claim.invocation_id], "evidence_excerpt": claim.excerpt,
            }],
        }],
    }


@dataclass
class Tally:
    total: int = 0
    flagged: int = 0
    rules: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.flagged / self.total if self.total else 0.0


def evaluate(
    claims: Iterable[GroundingClaim], sessions: Sequence[Session], gatekeeper: Gatekeeper | None = None,
    keep_examples: int = 0,
) -> dict[str, Tally]:
    """kind → how many claims the gate failed (for "true": false alarms; otherwise: catches)."""
    gatekeeper = gatekeeper or Gatekeeper.default()
    tallies: dict[str, Tally] = defaultdict(Tally)
    for claim in claims:
        session = sessions[claim.session]
        outcome = gatekeeper.validate(parse_executor_output(executor_output(claim)), session.invocations,
                                      session.session_id, query=session.query)
        tally = tallies[claim.kind]
        tally.total += 1
        flagged = "c1" in outcome.failed_claims
        if flagged:
            tally.flagged += 1
            tally.rules.update({e.rule_id for e in outcome.result.errors if e.level == "fail"})
        if flagged == is_true(claim.kind) and len(tally.examples) < keep_examples:
            reasons = "; ".join(f"{e.rule_id}: {e.message}" for e in outcome.result.errors if e.level == "fail")
            tally.examples.append(f"{claim.claim_text[:150]!r} [{claim.tool_name}#{claim.invocation_id}] {reasons}")
    return dict(tallies)


def summary(tallies: dict[str, Tally]) -> tuple[float, float]:
    """(catch rate over the perturbation classes, false-alarm rate on verbatim true claims)."""
    caught = sum(tallies[kind].flagged for kind in CLASSES if kind in tallies)
    fabricated = sum(tallies[kind].total for kind in CLASSES if kind in tallies)
    true = tallies.get("true", Tally())
    return (caught / fabricated if fabricated else 0.0), true.rate


def hard_catch(tallies: dict[str, Tally]) -> float:
    """The catch rate on in-output swaps and fabricated paraphrases together."""
    hard = [t for kind, t in tallies.items() if kind in HARD_CLASSES or kind.startswith("fake:")]
    total = sum(t.total for t in hard)
    return sum(t.flagged for t in hard) / total if total else 0.0


def paraphrase_false_alarm(tallies: dict[str, Tally]) -> float:
    """The false-alarm rate on true paraphrases (every ``true:<form>`` class together)."""
    flagged = sum(t.flagged for kind, t in tallies.items() if kind.startswith("true:"))
    total = sum(t.total for kind, t in tallies.items() if kind.startswith("true:"))
    return flagged / total if total else 0.0


def report(tallies: dict[str, Tally], out: Any = None) -> None:
    out = out or sys.stdout
    print(f"{'class':<22}{'claims':>8}{'flagged':>9}{'rate':>9}   rules that fired", file=out)
    for kind in kinds_in_order(list(tallies)):
        tally = tallies[kind]
        label = f"{kind} (false alarm)" if is_true(kind) else kind
        rules = ", ".join(f"{rule} {count}" for rule, count in tally.rules.most_common(3))
        print(f"{label:<22}{tally.total:>8}{tally.flagged:>9}{tally.rate:>9.1%}   {rules}", file=out)
        for example in tally.examples:
            print(f"    {'FALSE ALARM' if is_true(kind) else 'MISSED'}: {example}", file=out)
    catch, false_alarm = summary(tallies)
    print(f"catch rate {catch:.1%} on the perturbations (target >= {TARGET_CATCH:.0%}), {hard_catch(tallies):.1%} on "
          f"in-output swaps and fabricated paraphrases; false alarms {false_alarm:.1%} on verbatim and "
          f"{paraphrase_false_alarm(tallies):.1%} on paraphrased true claims (target <= {TARGET_FALSE_ALARM:.0%})",
          file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", help=f"holmesgpt_cases.jsonl (default: ${HOLMESGPT_ENV} or ../shared/external)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--lines-per-output", type=int, default=2)
    parser.add_argument("--limit-cases", type=int, default=None)
    parser.add_argument("--split", choices=SPLITS, default="all", help="a fixed half of the cases (see split_of)")
    parser.add_argument("--examples", type=int, default=0, help="print this many misses / false alarms per class")
    args = parser.parse_args(argv)
    try:
        sessions = load_sessions(args.cases, args.limit_cases, args.split)
    except DatasetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    claims = generate(sessions, seed=args.seed, lines_per_output=args.lines_per_output)
    started = time.perf_counter()
    tallies = evaluate(claims, sessions, keep_examples=args.examples)
    elapsed = time.perf_counter() - started
    print(f"HolmesGPT grounding: {len(sessions)} cases ({args.split}), {len(claims)} claims (seed {args.seed}), "
          "deterministic "
          f"Gatekeeper, no model; {elapsed:.1f} s")
    report(tallies)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
