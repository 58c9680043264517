"""parse_executor_output: raw Executor text → valid / missing / malformed (§13.1.1). Never raises.

Parse status says only whether the text yields a JSON object; schema validity is the Gatekeeper's. The parser is
tolerant of what models emit around JSON — code fences, prose before and after, byte-order marks, zero-width
characters, trailing commas, ``//`` comments, raw newlines inside strings — but it never invents content: a
truncated object stays malformed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evigate.signatures import ExecutorOutputParseStatus, ParseStatusValue

_INVISIBLE = re.compile("[\ufeff\u200b\u200c\u200d\u2060\u00ad]")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder(strict=False)
MAX_CANDIDATES = 32
"""How many ``{`` positions are tried before giving up (bounds the cost of hostile input)."""
PREFERRED_KEYS = ("answer_version", "claims")


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """The result of parsing the Executor's raw output."""

    status: ParseStatusValue
    detail: str
    data: dict[str, Any] | None = None

    @property
    def parse_status(self) -> ExecutorOutputParseStatus:
        """The §13.1.1 ``executor_output_parse_status`` record."""
        return ExecutorOutputParseStatus(status=self.status, detail=self.detail)


# One token at a time, at C speed: a string literal, a comment, a comma before a closing bracket, or a bracket.
_REPAIR_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?(?:\*/|\Z)|,(?=\s*[}\]])', re.DOTALL)
_BRACKET_TOKENS = re.compile(r'"(?:\\.|[^"\\])*"?|[{}\[\]]')


def _strip_comments_and_trailing_commas(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and commas before ``}``/``]`` outside strings."""
    return _REPAIR_TOKENS.sub(lambda match: match.group(0) if match.group(0).startswith('"') else "", text)


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the ``{`` at ``start``, or None if it never closes."""
    depth = 0
    for match in _BRACKET_TOKENS.finditer(text, start):
        token = match.group(0)
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if depth == 0:
                return match.end()
    return None


def _decode_object(text: str, *, repair: bool = True) -> tuple[Any, str] | None:
    """(value, how) when ``text`` is one JSON value, directly or after light repair; None otherwise."""
    try:
        return _DECODER.decode(text), ""
    except (ValueError, RecursionError):
        pass
    if not repair:
        return None
    repaired = _strip_comments_and_trailing_commas(text)
    if repaired != text:
        try:
            return _DECODER.decode(repaired), "repaired trailing commas/comments"
        except (ValueError, RecursionError):
            pass
    return None


def _objects_in(text: str) -> tuple[list[tuple[dict[str, Any], str]], bool]:
    """Every JSON object found in prose (first ``MAX_CANDIDATES`` starts), and whether any ``{`` never closed."""
    found: list[tuple[dict[str, Any], str]] = []
    unclosed = False
    position = text.find("{")
    tried = 0
    while position != -1 and tried < MAX_CANDIDATES:
        tried += 1
        try:  # the common case: a well-formed object, decoded in place at C speed
            value, end = _DECODER.raw_decode(text, position)
        except (ValueError, RecursionError):
            value, end = None, None
        if isinstance(value, dict) and end is not None:
            found.append((value, ""))
            position = text.find("{", end)
            continue
        end = _balanced_end(text, position)
        if end is None:
            unclosed = True
            break
        decoded = _decode_object(text[position:end])
        if decoded is not None and isinstance(decoded[0], dict):
            found.append((decoded[0], decoded[1]))
            position = text.find("{", end)
        else:
            position = text.find("{", position + 1)
    return found, unclosed


def _choose(objects: list[tuple[dict[str, Any], str]]) -> tuple[dict[str, Any], str]:
    """The executor contract when several objects appear: the first one with its keys, else the first one."""
    for obj, how in objects:
        if any(key in obj for key in PREFERRED_KEYS):
            return obj, how
    return objects[0]


def _parse_text(text: str) -> ParsedOutput:
    text = _INVISIBLE.sub("", text).strip()
    if not text:
        return ParsedOutput("missing", "executor output is empty")
    whole = _decode_object(text, repair=text[0] in "{[")
    if whole is not None:
        value, how = whole
        if isinstance(value, dict):
            return ParsedOutput("valid", _detail("parsed executor evidence contract", how), value)
        kind = "array" if isinstance(value, list) else type(value).__name__
        return ParsedOutput("malformed", f"top-level JSON {kind}, not an object")
    fences = [body for _, body in _FENCE.findall(text) if "{" in body]
    for body in fences:
        objects, _ = _objects_in(body)
        if objects:
            obj, how = _choose(objects)
            return ParsedOutput("valid", _detail("extracted JSON object from a code fence", how), obj)
    if "{" not in text:
        if text[0] == "[":
            return ParsedOutput("malformed", "output looks like a JSON array but does not parse")
        return ParsedOutput("missing", "executor output contains no JSON object")
    objects, unclosed = _objects_in(text)
    if objects:
        obj, how = _choose(objects)
        return ParsedOutput("valid", _detail("extracted JSON object from surrounding text", how), obj)
    if unclosed:
        return ParsedOutput("malformed", "JSON object is not closed (output truncated?)")
    return ParsedOutput("malformed", "output looks like JSON but does not parse")


def _detail(base: str, how: str) -> str:
    return f"{base} ({how})" if how else base


def parse_executor_output(raw: object) -> ParsedOutput:
    """Parse whatever the Executor returned. ``valid`` iff it yields a JSON object; never raises.

    Accepts text, bytes (UTF-8, invalid bytes replaced) or an already-decoded dict. ``None`` and blank text are
    ``missing``; text without any JSON object is ``missing``; a top-level array or scalar, an unclosed object or
    JSON-looking text that does not parse is ``malformed``.
    """
    try:
        if raw is None:
            return ParsedOutput("missing", "executor produced no output")
        if isinstance(raw, dict):
            return ParsedOutput("valid", "executor output was already a JSON object", raw)
        if isinstance(raw, bytes | bytearray | memoryview):
            raw = bytes(raw).decode("utf-8", errors="replace")
        if isinstance(raw, str):
            return _parse_text(raw)
        if isinstance(raw, list | tuple):
            return ParsedOutput("malformed", "top-level JSON array, not an object")
        return ParsedOutput("malformed", f"executor output of type {type(raw).__name__} is not JSON text")
    except Exception as error:  # the contract is "never raises": anything unforeseen is malformed output
        return ParsedOutput("malformed", f"unparseable executor output ({type(error).__name__})")
