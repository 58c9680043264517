"""The Composer alone on recorded inputs: how often the output guards would show its own text.

Reads the composer inputs a question-bank run recorded (the JSONL of ``bench/questions.py --out``), asks the Composer
of the configured program (embedded default: the 0.5B model) for each again, and applies the guards that need only
the input (``modules.judgement.answer_violations``: entities, root causes, hypotheses as fact, Markdown/JSON, junk,
the question restated, no directly supported fact stated, a LOW_CONFID answer naming no gap). The claim-echo guard
needs the session's disallowed claims, which the JSONL does not hold, so the rate printed is an upper bound of what
the program shows. A REJECT answer is rendered by code and never asks the Composer: those rows are skipped.

It is the quick loop for the Composer's prompt (a few seconds per input on 2 cores, versus minutes per question end
to end): ``--instructions FILE`` replaces the signature's instructions for the run. Tune on train and dev answers only.

Rerun:  .venv/bin/python bench/questions.py --split train --limit 40 --out /tmp/train.jsonl
        .venv/bin/python bench/composer_shown.py /tmp/train.jsonl
        .venv/bin/python bench/composer_shown.py /tmp/train.jsonl --instructions my_prompt.txt
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _inputs(paths: Sequence[str]) -> list[tuple[str, str, Any]]:
    from evigate.signatures import ComposerInput

    rows = []
    for path in paths:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                material = record.get("composer_input")
                if not material or record.get("verdict") == "REJECT":
                    continue
                rows.append((str(record.get("id", f"{path}:{number}")), str(record.get("split", "?")),
                             ComposerInput.model_validate(material)))
            except (ValueError, AttributeError) as exc:  # pydantic's ValidationError is a ValueError
                raise ValueError(f"{path}:{number}: not a recorded answer with a composer_input ({exc})") from exc
    return rows


def _violation_kind(violation: str) -> str:
    """A violation's kind: its text up to the quoted sentence or entity."""
    return violation.split("“", 1)[0].split("'", 1)[0].strip(" :")


def measure(program: Any, rows: Sequence[tuple[str, str, Any]], *, quiet: bool = False) -> tuple[int, Counter[str]]:
    """Ask ``program``'s Composer for each input again: (how many would be shown, answers per violation kind)."""
    from evigate.modules.calls import call_agent
    from evigate.modules.judgement import answer_violations
    from evigate.signatures import ComposerOutput

    lm = program.lm_for("composer")
    shown, kinds = 0, Counter[str]()
    for question_id, _, composer_input in rows:
        call = call_agent(program.composer, "composer", lm, program.settings.timeouts.agent_seconds,
                          composer_input=composer_input)
        output = getattr(call.prediction, "composer_output", None) if call.ok else None
        violations = (answer_violations(composer_input, output) if isinstance(output, ComposerOutput)
                      else [f"composer output unusable: {call.error or type(output).__name__}"])
        shown += not violations
        kinds.update({_violation_kind(violation) for violation in violations})
        if not quiet:
            text = output.user_facing_answer if isinstance(output, ComposerOutput) else ""
            print(f"  {'shown   ' if not violations else 'replaced'} {question_id} {composer_input.verdict}: "
                  f"{' '.join(text.split())[:100]}")
            for violation in violations[:3]:
                print(f"      - {violation[:120]}")
    return shown, kinds


def main(argv: Sequence[str] | None = None) -> int:
    from evigate.modules.program import DiagnosisProgram
    from evigate.optimize.stats import wilson

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", nargs="+", help="JSONL of bench/questions.py --out")
    parser.add_argument("--instructions", default=None, help="a file whose text replaces the Composer's instructions")
    parser.add_argument("--settings", default=None, help="a settings YAML instead of the embedded defaults")
    parser.add_argument("--quiet", action="store_true", help="figures only, no per-input lines")
    args = parser.parse_args(argv)
    try:
        rows = _inputs(args.answers)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not rows:
        print("no composer inputs in these files (REJECT answers never ask the Composer)")
        return 1
    program = DiagnosisProgram.from_settings(args.settings, database=Path(tempfile.mkdtemp()) / "composer.duckdb")
    if args.instructions:
        predict = program.composer.compose
        predict.signature = predict.signature.with_instructions(Path(args.instructions).read_text("utf-8").strip())
    print(f"{len(rows)} composer input(s) from splits {sorted({split for _, split, _ in rows})}; "
          f"model {program.model_of('composer')}")
    started = time.perf_counter()
    shown, kinds = measure(program, rows, quiet=args.quiet)
    rate, low, high = wilson(shown, len(rows))
    seconds = time.perf_counter() - started
    print(f"\nComposer's own text would be shown: {shown}/{len(rows)} = {rate:.1%} [95 % CI {low:.1%}–{high:.1%}] "
          f"(an upper bound: the claim-echo guard is not applied); {seconds / len(rows):.1f} s per input")
    for kind, count in kinds.most_common():
        print(f"  {count:3d} answers: {kind}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
