"""Benchmark: how much the embedded model itself can tell a hallucinated FaithBench sentence from a faithful one.

`evigate verify --model` hands the model the sentences code leaves undecided. Whether that can lift the response-level
figure depends on one thing: does the model separate those sentences at all? This script asks it in the two cheapest
forms a small model allows, with no JSON and no schema in the way, so a weak figure is the model's and not the
prompt format's:

  judge       — P("yes") against P("no") as the next token after a chat prompt that holds the source and one sentence
                and asks whether everything the sentence says is stated in the source (one forward pass per sentence;
                the source is evaluated once per record and reused);
  likelihood  — the mean log-probability of the sentence's tokens when the model reads the whole response as a
                summary of the source (the BARTScore idea: what a summary adds that the source does not support is
                unlikely given the source). Needs every position's logits, so the model is loaded with logits_all.

Gold per sentence: it overlaps an Unwanted or Questionable span of the record (Benign spans do not count). Sentences
and code labels are exactly those of `evigate.rules.grounding.ground`. Printed: the AUC of each signal (0.5 =
chance) over all claim sentences and over the sentences code leaves undecided, the AUC of code's own word coverage
for comparison, and the response-level balanced accuracy if the judge's "no" on an undecided sentence flagged its
response (the best `verify --model` could do with this question), beside code alone.

Data: ../shared/external/faithbench/faithbench_subset.jsonl (read in place; CC BY-NC-SA 4.0).
Run:  python bench/grounding_model_signal.py [--limit N] [--signals judge,likelihood] [--data PATH]
All 300 records took about 16 min (judge) and 23 min (likelihood) on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evigate.llm.models import DEFAULT_LOCAL_MODEL
from evigate.rules.grounding import ground

JUDGE_SYSTEM = "You check facts. Answer only yes or no."
SUMMARY_SYSTEM = "You summarize documents faithfully."
QUESTION = "Is everything the sentence says stated in the document? Answer yes or no."
MAX_PROMPT_TOKENS = 3900
NOT_SUPPORTED = {"unsupported", "contradicted", "external_unknown"}


def _faithbench() -> Any:
    path = Path(__file__).resolve().parent / "grounding_faithbench.py"
    spec = importlib.util.spec_from_file_location("bench_grounding_faithbench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class SentenceRow:
    """One claim sentence: where it is, what code said of it, the gold label and the model's signals."""

    record: str
    start: int
    end: int
    text: str
    code_label: str
    decided: bool
    coverage: float
    gold: bool
    signals: dict[str, float] = field(default_factory=dict)


def sentence_rows(record: dict[str, Any]) -> list[SentenceRow]:
    """The claim sentences of a record's response with code's labels and the gold label from its spans."""
    grounding = ground(record["response"], [record["source"]])
    labels = {label.claim_id: label for label in grounding.labels}
    spans = [(s["start"], s["end"]) for s in record["hallucination_spans"]
             if not str(s.get("label_type", "")).startswith("Benign")]
    rows = []
    for item in grounding.case.sentences:
        if item.claim_id is None:
            continue
        sentence, label = item.sentence, labels[item.claim_id]
        rows.append(SentenceRow(
            record=record["id"], start=sentence.start, end=sentence.end, text=sentence.text,
            code_label=label.verification, decided=label.decided, coverage=item.coverage,
            gold=any(start < sentence.end and end > sentence.start for start, end in spans),
        ))
    return rows


def auc(scores: Sequence[float], gold: Sequence[bool]) -> float:
    """Probability that a gold-positive item scores above a negative one (ties count half); nan if a class is empty."""
    values = np.asarray(scores, dtype=float)
    labels = np.asarray(gold, dtype=bool)
    positive, negative = values[labels], values[~labels]
    if not len(positive) or not len(negative):
        return float("nan")
    above = (positive[:, None] > negative[None, :]).mean()
    tied = (positive[:, None] == negative[None, :]).mean()
    return float(above + 0.5 * tied)


class ModelProbe:
    """The embedded model loaded once with every position's logits, and the two signals read from it."""

    def __init__(self, model: str) -> None:
        import llama_cpp

        from evigate.llm.models import resolve_local_model
        from evigate.llm.runtime import _model_params_override, default_threads, extra_buffers_enabled

        threads = default_threads()
        with _model_params_override(use_extra_buffers=extra_buffers_enabled()):
            self.llama = llama_cpp.Llama(
                model_path=str(resolve_local_model(model.partition("/")[2] or DEFAULT_LOCAL_MODEL)),
                n_ctx=4096, n_threads=threads, n_threads_batch=threads, logits_all=True, verbose=False,
            )
        self.yes = self._single_tokens("yes", "Yes")
        self.no = self._single_tokens("no", "No")

    def _single_tokens(self, *words: str) -> list[int]:
        ids = [self.llama.tokenize(word.encode(), add_bos=False) for word in words]
        return [tokens[0] for tokens in ids if len(tokens) == 1]

    def _tokens(self, text: str, special: bool = False) -> list[int]:
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=special))

    def _log_probs(self, position: int) -> np.ndarray:
        row = np.asarray(self.llama.scores[position], dtype=np.float64)
        top = row.max()
        return row - (top + np.log(np.exp(row - top).sum()))

    def _chat(self, system: str, user: str) -> list[int]:
        return self._tokens(f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}", special=True)

    def judge(self, source: str, rows: Sequence[SentenceRow]) -> None:
        """log P(no) - log P(yes) per sentence (higher = the model doubts it), the source evaluated once."""
        prefix = self._chat(JUDGE_SYSTEM, f"Document:\n{source}\n\n")
        if len(prefix) > MAX_PROMPT_TOKENS:
            return
        self.llama.reset()
        self.llama.eval(prefix)
        for row in rows:
            suffix = self._tokens(f"Sentence: {row.text}\n\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n",
                                  special=True)
            if len(prefix) + len(suffix) > MAX_PROMPT_TOKENS:
                continue
            self.llama.n_tokens = len(prefix)
            self.llama.eval(suffix)
            log_probs = self._log_probs(self.llama.n_tokens - 1)
            row.signals["judge"] = float(np.logaddexp.reduce(log_probs[self.no])
                                         - np.logaddexp.reduce(log_probs[self.yes]))

    def likelihood(self, source: str, response: str, rows: Sequence[SentenceRow]) -> None:
        """Minus the mean log-probability of each sentence's tokens, the response read as the model's summary."""
        prefix = self._chat(SUMMARY_SYSTEM, f"Summarize this document.\n\n{source}") + self._tokens(
            "<|im_end|>\n<|im_start|>assistant\n", special=True)
        tokens = self._tokens(response)
        if len(prefix) + len(tokens) > MAX_PROMPT_TOKENS:
            return
        self.llama.reset()
        self.llama.eval(prefix + tokens)
        spans, offset = [], 0
        for token in tokens:
            size = len(self.llama.detokenize([token]))
            spans.append((offset, offset + size))
            offset += size
        for row in rows:
            start, end = len(response[: row.start].encode()), len(response[: row.end].encode())
            values = [self._log_probs(len(prefix) + i - 1)[token]
                      for i, (token, (first, last)) in enumerate(zip(tokens, spans, strict=True))
                      if first >= start and last <= end]
            if values:
                row.signals["likelihood"] = -float(np.mean(values))


def report(records: Sequence[dict[str, Any]], rows: Sequence[SentenceRow], signals: Sequence[str],
           balanced_accuracy: Any) -> None:
    undecided = [row for row in rows if not row.decided]
    print(f"FaithBench: {len(records)} records, {len(rows)} claim sentences "
          f"({sum(r.gold for r in rows)} overlap a hallucination span), {len(undecided)} left undecided by code")
    print(f"model: local/{DEFAULT_LOCAL_MODEL} (Q4_K_M, llama.cpp); AUC 0.5 = chance")
    print(f"  {'signal':<34} {'AUC, all claims':>16} {'AUC, undecided':>15}")
    coverage = ("code: 1 - word coverage", lambda r: 1.0 - r.coverage)
    for name, score in [coverage, *[(f"model: {s}", lambda r, s=s: r.signals.get(s)) for s in signals]]:
        scored = [r for r in rows if score(r) is not None]
        left = [r for r in undecided if score(r) is not None]
        print(f"  {name:<34} {auc([score(r) for r in scored], [r.gold for r in scored]):16.3f} "
              f"{auc([score(r) for r in left], [r.gold for r in left]):15.3f}")
    gold = [bool(r["hallucinated"]) for r in records]
    by_record: dict[str, list[SentenceRow]] = {}
    for row in rows:
        by_record.setdefault(row.record, []).append(row)
    code = [any(r.code_label in NOT_SUPPORTED for r in by_record.get(rec["id"], [])) for rec in records]
    print(f"  response-level balanced accuracy: code alone {balanced_accuracy(gold, code):.1f}", end="")
    if "judge" in signals:
        doubts = [r for r in undecided if r.signals.get("judge", -1.0) > 0]
        flagged = [flag or any(not r.decided and r.signals.get("judge", -1.0) > 0 for r in by_record.get(rec["id"], []))
                   for flag, rec in zip(code, records, strict=True)]
        precision = f"{statistics.fmean(r.gold for r in doubts):.0%}" if doubts else "n/a"
        base = f"{statistics.fmean(r.gold for r in undecided):.0%}" if undecided else "n/a"
        print(f"; with the judge's 'no' on undecided sentences {balanced_accuracy(gold, flagged):.1f}\n"
              f"  the judge said 'no' to {len(doubts)} of {len(undecided)} undecided sentences; "
              f"{precision} of those overlap a hallucination span (base rate {base})")
    else:
        print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="FaithBench JSONL (default: the shared subset)")
    parser.add_argument("--limit", type=int, default=None, help="first N records only")
    parser.add_argument("--signals", default="judge,likelihood", help="comma-separated: judge, likelihood")
    parser.add_argument("--model", default=f"local/{DEFAULT_LOCAL_MODEL}", help="an embedded local/<name> model")
    args = parser.parse_args(argv)
    faithbench = _faithbench()
    path = args.data or (faithbench.DEFAULT_DATA if faithbench.DEFAULT_DATA.exists() else faithbench.FALLBACK_DATA)
    if not path.exists():
        print(f"FaithBench data not found at {path}; pass --data", file=sys.stderr)
        return 2
    signals = [s for s in args.signals.split(",") if s in ("judge", "likelihood")]
    records = faithbench.load_records(path, args.limit)
    probe = ModelProbe(args.model) if signals else None
    rows: list[SentenceRow] = []
    started = time.perf_counter()
    for number, record in enumerate(records, start=1):
        record_rows = sentence_rows(record)
        rows.extend(record_rows)
        if probe is not None and "judge" in signals:
            probe.judge(record["source"], record_rows)
        if probe is not None and "likelihood" in signals:
            probe.likelihood(record["source"], record["response"], record_rows)
        if number % 25 == 0:
            print(f"  {number}/{len(records)} records, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    report(records, rows, signals, faithbench.balanced_accuracy)
    print(f"took {time.perf_counter() - started:.0f} s; rerun: python bench/grounding_model_signal.py"
          + (f" --limit {args.limit}" if args.limit else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
