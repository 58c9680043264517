"""The question bank answered by code alone: what the deterministic core confirms with every model silenced.

The same program and metrics as ``bench/questions.py``, with each agent's model replaced by the least it could do:
the Planner never proposes (code plans: the error code the question names, the census of the records it points at,
or the best skill by text), the Executor runs the plan's calls and writes no claim, the Verifier judges nothing and
the Composer fails (the renderer writes the answer). Every confirmed fact is then one that code found in the tool
outputs and stated itself (docs/confirmation.md §4d), so these figures separate what code contributes from what the
0.5B model adds or costs. No model is loaded; a split takes a minute or two.

Rerun:  .venv/bin/python bench/questions_code_only.py --split test
        .venv/bin/python bench/questions_code_only.py --split dev --out /tmp/dev-code.jsonl
        .venv/bin/python bench/questions_code_only.py --split train --ids when-zh-03,which-en-04 --verbose
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from questions import report  # the sibling bench script's printer

CODE_ONLY = "code-only"


def answer(questions: Sequence[Any], out: Path) -> list[Any]:
    from evigate.datasets.codeonly_sessions import code_only_program
    from evigate.optimize.question_runs import ask_question

    program = code_only_program(Path(tempfile.mkdtemp(prefix="evigate-code-only-")) / "evigate.duckdb")
    answered = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as sink:
        for question in questions:
            item = ask_question(program, question).model_copy(update={"model": CODE_ONLY})
            sink.write(item.model_dump_json() + "\n")
            answered.append(item)
    return answered


def main(argv: Sequence[str] | None = None) -> int:
    from evigate.datasets.questions import load_questions

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("train", "dev", "test", "all"), default="dev")
    parser.add_argument("--out", default=None, help="per-question JSONL (default: a new file under the temp dir)")
    parser.add_argument("--ids", default="", help="comma-separated question ids (within the split)")
    parser.add_argument("--verbose", action="store_true", help="one line per question")
    args = parser.parse_args(argv)
    questions = load_questions(split=None if args.split == "all" else args.split)
    if args.ids:
        wanted = {qid.strip() for qid in args.ids.split(",") if qid.strip()}
        questions = [q for q in questions if q.id in wanted]
    if not questions:
        parser.error("no question matches that split and id selection")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="evigate-code-only-")) / "answers.jsonl"
    print(f"{len(questions)} question(s) of split {args.split}, no model (every agent silenced; code answers)")
    report(answer(questions, out), verbose=args.verbose)
    print(f"\nanswers: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
