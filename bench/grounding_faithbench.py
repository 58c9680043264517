"""Benchmark: `evigate.verify` on FaithBench (hard summarisation hallucinations), beside the detectors shipped with it.

Data: ../shared/external/faithbench/faithbench_subset.jsonl (300 (source, summary) pairs by 10 LLMs, chosen because
detectors disagree on them; 204 hallucinated, 96 not; CC BY-NC-SA 4.0, read in place, never copied). A response is
predicted hallucinated when `verify(response, [source]).supported` is False. The figure is response-level balanced
accuracy (mean of the recall on hallucinated and on consistent responses), the data set's own binarisation
(`hallucinated`: worst label Unwanted or Questionable). The detectors' figures are computed from the
`detector_predictions` of the same records: HHEM scores below 0.5 and binary judges' 0 mean "hallucinated".

Run:  python bench/grounding_faithbench.py [--limit N] [--model local/qwen2.5-coder-0.5b] [--no-model-only]
      [--data PATH] [--json]
Without --model only the code path runs (about a second for all 300). With --model every response is verified
again with the Verifier model judging what code left undecided; on a shared 2-core machine the embedded 0.5B model
takes tens of seconds per response, so use --limit for a first figure (the first N records, the same for every
detector in the table).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "external" / "faithbench" / "faithbench_subset.jsonl"
FALLBACK_DATA = Path("/work/shared/external/faithbench/faithbench_subset.jsonl")
DETECTORS = {"HHEM-2.1": "hhem-2.1", "GPT-4-Turbo": "gpt-4-turbo", "GPT-4o": "gpt_4o", "TrueTeacher": "trueteacher"}


def load_records(path: Path, limit: int | None) -> list[dict[str, Any]]:
    """The records, in file order (the first ``limit`` when given)."""
    with path.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return records[:limit] if limit else records


def balanced_accuracy(gold: Sequence[bool], predicted: Sequence[bool]) -> float:
    """Mean recall of the two classes (True = hallucinated), in percent; a missing class counts as recall 0."""
    recalls = []
    for value in (True, False):
        indexes = [i for i, label in enumerate(gold) if label is value]
        recalls.append(sum(predicted[i] is value for i in indexes) / len(indexes) if indexes else 0.0)
    return 100.0 * statistics.fmean(recalls)


def detector_prediction(name: str, value: Any) -> bool | None:
    """True = predicted hallucinated; None when the detector has no prediction for the record."""
    if value is None:
        return None
    return float(value) < 0.5 if name.startswith("hhem") else int(value) == 0


def detector_rows(records: Sequence[dict[str, Any]]) -> list[tuple[str, float, int]]:
    """(detector, balanced accuracy, records it predicted) from the predictions shipped with the data."""
    rows = []
    for label, key in DETECTORS.items():
        pairs = [(r["hallucinated"], detector_prediction(key, r["detector_predictions"].get(key))) for r in records]
        pairs = [(gold, pred) for gold, pred in pairs if pred is not None]
        if pairs:
            rows.append((label, balanced_accuracy([g for g, _ in pairs], [p for _, p in pairs]), len(pairs)))
    return rows


def run_verify(records: Sequence[dict[str, Any]], model: str | None,
               progress: Callable[[str], None] | None = None) -> tuple[list[bool], list[float]]:
    """Per record: predicted hallucinated (not supported) and seconds taken."""
    from evigate.verification import verify

    predicted, seconds = [], []
    for number, record in enumerate(records, start=1):
        started = time.perf_counter()
        result = verify(record["response"], [record["source"]], model=model)
        seconds.append(time.perf_counter() - started)
        predicted.append(not result.supported)
        if progress and model:
            progress(f"  {number}/{len(records)} {record['id']}: {'hallucinated' if predicted[-1] else 'ok'} "
                     f"({seconds[-1]:.1f} s)")
    return predicted, seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="FaithBench JSONL (default: the shared subset)")
    parser.add_argument("--limit", type=int, default=None, help="first N records only")
    parser.add_argument("--model", default="local/qwen2.5-coder-0.5b",
                        help="model for the second run (default: the embedded local/qwen2.5-coder-0.5b)")
    parser.add_argument("--no-model-only", action="store_true", help="skip the run with a model")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    path = args.data or (DEFAULT_DATA if DEFAULT_DATA.exists() else FALLBACK_DATA)
    if not path.exists():
        print(f"FaithBench data not found at {path}; pass --data", file=sys.stderr)
        return 2
    records = load_records(path, args.limit)
    gold = [bool(r["hallucinated"]) for r in records]
    figures: dict[str, Any] = {"data": str(path), "records": len(records), "hallucinated": sum(gold),
                               "detectors": {}, "verify": {}}
    for label, accuracy, count in detector_rows(records):
        figures["detectors"][label] = {"balanced_accuracy": round(accuracy, 1), "records": count}
    runs: list[str | None] = [None] if args.no_model_only else [None, args.model]
    for model in runs:
        say = None if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
        predicted, seconds = run_verify(records, model, progress=say)
        figures["verify"][model or "no model"] = {
            "balanced_accuracy": round(balanced_accuracy(gold, predicted), 1),
            "flagged": sum(predicted),
            "seconds_p50": round(statistics.median(seconds), 3),
            "seconds_total": round(sum(seconds), 1),
        }
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return 0
    print(f"FaithBench: {len(records)} records ({sum(gold)} hallucinated) from {path}")
    print("response-level balanced accuracy (%), hallucinated = positive class")
    for name, row in figures["verify"].items():
        print(f"  evigate verify ({name}){'':<6} {row['balanced_accuracy']:5.1f}   flagged {row['flagged']:>3}, "
              f"p50 {row['seconds_p50']:.3f} s/response, total {row['seconds_total']:.1f} s")
    for name, row in figures["detectors"].items():
        print(f"  {name:<28} {row['balanced_accuracy']:5.1f}   (shipped predictions, {row['records']} records)")
    limit = f" --limit {args.limit}" if args.limit else ""
    print(f"rerun: python bench/grounding_faithbench.py{limit}" + (" --no-model-only" if args.no_model_only else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
