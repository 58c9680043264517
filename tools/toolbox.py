"""`Toolbox`: session-bound, recorded tool calls. Every call becomes one `tool_invocation` row.

Failures are facts too: an unknown tool, arguments the tool's `Args` rejects (a time beyond the calendar, text that
is not valid Unicode), or an exception inside a tool are recorded with `success=false` and the error, and come
back as a failed `ToolResult` — never as an exception into the pipeline. A store that refuses or fails to record
the call is no exception either: the result is failed, carries no invocation id, and the `StoreError` is kept in
`Toolbox.store_failures` for the round to surface as what it is (an audit that cannot be written).
"""

from __future__ import annotations

import math
import time
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from evigate.errors import AuditValueError, StoreError, ToolError
from evigate.redaction import redact_secrets, redact_value
from evigate.signatures import ToolInvocation
from evigate.signatures.preview import truncate
from evigate.store.codec import REPLACEMENT_CHARACTER, clean_value, has_surrogates
from evigate.tools.base import Tool, ToolOutput, ToolRegistry
from evigate.tools.builtins import default_registry
from evigate.tools.source import DataSource

DEFAULT_MAX_OUTPUT_CHARS = 20_000
DEFAULT_PREVIEW_CHARS = 2_000
MAX_ERROR_CHARS = 2_000


class InvocationRecorder(Protocol):
    """The part of `evigate.store.AuditStore` the toolbox needs."""

    def cursor(self) -> Any: ...

    def record_invocation(
        self, session_id: str, round: int, tool_name: str, input: dict[str, Any], output: str, *,
        retrieval_details: dict[str, Any] | list[Any] | None = None, success: bool = True, error: str | None = None,
        is_evidence: bool = True, latency_ms: float = 0.0, preview_chars: int = 2000,
    ) -> ToolInvocation: ...

    def invocations(self, session_id: str, round: int | None = None) -> list[ToolInvocation]: ...


class ToolResult(BaseModel):
    """What the caller of `Toolbox.call` gets back; `invocation_id` is what evidence bindings cite."""

    invocation_id: int | None = Field(description="the tool_invocation row; None only when the store could not record")
    tool_name: str
    output: str
    success: bool
    error: str | None = None
    retrieval_details: dict[str, Any] | list[Any] | None = None


def _strict(value: Any, depth: int = 0) -> Any:
    if depth > 20:  # deeper than any real tool argument; also ends circular structures
        return repr(value)[:200]
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)  # NaN/Infinity are not JSON
    if isinstance(value, dict):
        return {str(key): _strict(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_strict(item, depth + 1) for item in value]
    return str(value)  # datetimes, paths, models: their text is what the call meant


def json_safe(value: Any) -> Any:
    """A strict-JSON copy of tool arguments or details (non-finite floats, dates and other objects as strings)."""
    return _strict(value)


def validation_message(tool_name: str, error: ValidationError) -> str:
    """"invalid arguments for query_logs: limit: Input should be less than or equal to 200 (got 5000)"."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        got = f" (got {item['input']!r})" if item["type"] != "missing" and "input" in item else ""
        problems.append(f"{where}: {item['msg']}{got}"[:300])
    return f"invalid arguments for {tool_name}: " + "; ".join(problems)


def cap_output(text: str, limit: int) -> str:
    """Text within `limit` characters, marking how much was cut (evigate's one truncation format)."""
    return truncate(text, limit)


def _unencodable_fields(args: dict[str, Any]) -> list[str]:
    """Names of the arguments holding text that is not Unicode (lone surrogates), at any depth.

    A NUL is valid text: the tool runs on it, and only the audit shows U+FFFD in its place (no database holds NUL).
    """
    return [str(key) for key, value in args.items() if has_surrogates(str(key)) or has_surrogates(json_safe(value))]


def record_text(text: str, record: ToolInvocation) -> str:
    """The output the caller gets: the text as recorded (cleaned like the stored output, never other text)."""
    return clean_value(text) if record.success else f"ERROR: {record.error}"


class Toolbox:
    """Tools bound to one session and round of an audit store; `call` runs and records."""

    def __init__(
        self,
        store: InvocationRecorder,
        session_id: str,
        round: int = 1,
        registry: ToolRegistry | None = None,
        *,
        source: DataSource | None = None,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        preview_chars: int = DEFAULT_PREVIEW_CHARS,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.round = round
        self.registry = registry if registry is not None else default_registry()
        self.source = source if source is not None else DataSource(store)
        self.max_output_chars = max_output_chars
        self.preview_chars = preview_chars
        self.store_failures: list[StoreError] = []
        """Errors of the store while recording calls (the calls came back failed, unrecorded)."""

    def call(self, name: str, /, **args: Any) -> ToolResult:
        """Run tool `name` with `args` and record the invocation, whatever happens; never raises."""
        started = time.perf_counter()
        safe_args = json_safe(args)
        unencodable = _unencodable_fields(args)
        if unencodable:
            # The audit can only hold the cleaned text (U+FFFD); running the tool on other text than it records
            # would make the invocation row lie, so the call is refused and recorded as failed.
            tool, output = None, None
            error = (f"arguments {unencodable} hold text that is not valid Unicode (lone surrogates); not run. "
                     f"The audit shows them with {REPLACEMENT_CHARACTER!r} in their place")
        else:
            tool, output, error = self._execute(name, args)
        latency_ms = (time.perf_counter() - started) * 1000
        success = error is None and output is not None
        # Credentials never reach the audit or the model: a source URL's password inside a connection error, a
        # token in a tool's output (evigate.redaction). The caller gets the recorded text, so both agree.
        if error is not None:
            error = redact_secrets(error)
            if len(error) > MAX_ERROR_CHARS:
                error = error[:MAX_ERROR_CHARS] + "…"
        ran = success and output is not None
        text = cap_output(redact_secrets(output.text), self.max_output_chars) if ran and output else f"ERROR: {error}"
        raw_details = output.retrieval_details if ran and output else None
        details = redact_value(json_safe(raw_details)) if raw_details else None
        is_evidence = tool.is_evidence if tool is not None else True
        try:
            record = self._record(str(name), safe_args, text, details, success, error, is_evidence, latency_ms)
        except StoreError as exc:
            self.store_failures.append(exc)
            failure = f"the audit store could not record this call: {exc}"
            return ToolResult(invocation_id=None, tool_name=str(name), output=f"ERROR: {failure}", success=False,
                              error=failure)
        return ToolResult(invocation_id=record.id, tool_name=record.tool_name, output=record_text(text, record),
                          success=record.success, error=record.error, retrieval_details=record.retrieval_details)

    def _record(
        self, name: str, args: dict[str, Any], text: str, details: Any, success: bool, error: str | None,
        is_evidence: bool, latency_ms: float,
    ) -> ToolInvocation:
        """Record the call; a value the store rejects turns the record into a failed call that says why."""
        try:
            return self.store.record_invocation(
                self.session_id, self.round, name, args, text, retrieval_details=details, success=success,
                error=error, is_evidence=is_evidence, latency_ms=latency_ms, preview_chars=self.preview_chars,
            )
        except AuditValueError as exc:
            rejected = f"the audit store rejected this call's record ({exc}); its output is withheld"
            return self.store.record_invocation(
                self.session_id, self.round, name, {"unrecordable_arguments": repr(args)[:MAX_ERROR_CHARS]},
                f"ERROR: {rejected}", success=False, error=rejected, is_evidence=is_evidence, latency_ms=latency_ms,
                preview_chars=self.preview_chars,
            )

    def _execute(self, name: str, args: dict[str, Any]) -> tuple[Tool | None, ToolOutput | None, str | None]:
        """(tool, output, error): exactly one of output and error is set."""
        try:
            tool = self.registry.get(name)
        except ToolError as exc:
            return None, None, str(exc)
        try:
            parsed = tool.Args.model_validate(args)
        except ValidationError as exc:
            return tool, None, validation_message(name, exc)
        except Exception as exc:  # a validator that raised something other than ValueError (pydantic passes it on)
            return tool, None, f"invalid arguments for {name}: {type(exc).__name__}: {exc}"
        try:
            output = tool.run(parsed, self.source)
        except ToolError as exc:
            return tool, None, str(exc)
        except Exception as exc:  # a tool's own bug or a query failure: recorded, never raised into the pipeline
            return tool, None, f"{name} failed: {type(exc).__name__}: {exc}"
        if not isinstance(output, ToolOutput):
            return tool, None, f"tool {name!r} returned {type(output).__name__}, expected ToolOutput"
        return tool, output, None

    def for_round(self, round: int) -> Toolbox:
        """The same tools, session and data source, recording under another round (store failures shared)."""
        toolbox = Toolbox(self.store, self.session_id, round, self.registry, source=self.source,
                          max_output_chars=self.max_output_chars, preview_chars=self.preview_chars)
        toolbox.store_failures = self.store_failures
        return toolbox

    def invocations(self, round: int | None = None) -> list[ToolInvocation]:
        """Recorded invocations of this session (all rounds unless one is given)."""
        return self.store.invocations(self.session_id, round)

    def specs(self) -> list[dict[str, Any]]:
        """Tool specs for prompts."""
        return self.registry.specs()
