"""A readable diff of what compiling changed: per predictor, its instructions and the demos added or removed.

Pure text, logged by the optimize job as ``program_diff.md``. Long demo values are cut with evigate's one
truncation format (:func:`evigate.signatures.preview.truncate`), so a reader sees where a value was shortened.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.signatures.preview import truncate

VALUE_CHARS = 300
"""Characters of one demo field shown before the value is cut."""

HIDDEN_DEMO_KEYS = frozenset({"augmented"})
"""DSPy's bookkeeping flag on bootstrapped demos; the prompt never shows it."""


@dataclass(frozen=True)
class PredictorView:
    """What a predictor puts in its prompt: the instructions and the demos rendered as text."""

    instructions: str
    demos: tuple[str, ...]


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=False, default=str)


def render_demo(demo: Mapping[str, Any], value_chars: int = VALUE_CHARS) -> str:
    """One demo as ``field: value`` lines, long values cut."""
    return "\n".join(f"{key}: {truncate(_value_text(value), value_chars)}"
                     for key, value in demo.items() if key not in HIDDEN_DEMO_KEYS)


def predictor_views(module: Any) -> dict[str, PredictorView]:
    """Predictor name → its view, for a DSPy module (taken before compile for the student: copies may share state)."""
    return {name: PredictorView(predictor.signature.instructions,
                                tuple(render_demo(dict(demo.items())) for demo in predictor.demos))
            for name, predictor in module.named_predictors()}


def _demo_section(title: str, demos: Sequence[str]) -> list[str]:
    lines = [f"**{title}** ({len(demos)})", ""]
    for index, demo in enumerate(demos, start=1):
        lines += [f"{index}.", "```text", demo, "```", ""]
    return lines


def render_diff(before: Mapping[str, PredictorView], after: Mapping[str, PredictorView]) -> str:
    """Markdown: per predictor, a unified diff of the instructions and the demos added and removed."""
    lines = ["# Program diff: student → compiled", ""]
    for name in sorted(set(before) | set(after)):
        old = before.get(name, PredictorView("", ()))
        new = after.get(name, PredictorView("", ()))
        lines += [f"## {name}", ""]
        diff = list(difflib.unified_diff(old.instructions.splitlines(), new.instructions.splitlines(),
                                         "student", "compiled", lineterm=""))
        lines += ["### Instructions", ""]
        lines += ["```diff", *diff, "```", ""] if diff else ["unchanged", ""]
        added = [demo for demo in new.demos if demo not in old.demos]
        removed = [demo for demo in old.demos if demo not in new.demos]
        lines += ["### Demos", "", f"{len(old.demos)} → {len(new.demos)}", ""]
        if added:
            lines += _demo_section("added", added)
        if removed:
            lines += _demo_section("removed", removed)
    return "\n".join(lines).rstrip() + "\n"
