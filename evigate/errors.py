"""The one exception hierarchy of evigate.

Everything evigate raises on purpose derives from :class:`EvigateError`, so callers can catch the product's
errors without catching programming mistakes. Pure code (parsing, gatekeeper, verdict) never raises on bad
*data*: it returns a safe verdict. These errors are for bad *configuration* and broken *infrastructure*.
"""

from __future__ import annotations


class EvigateError(Exception):
    """Base class of every error evigate raises deliberately."""


class ConfigError(EvigateError):
    """A settings file, environment variable or rule file is invalid. The message names the file and key."""


class RuleConfigError(ConfigError):
    """A gatekeeper rule index or metadata file is invalid (unknown rule, unknown parameter, bad value)."""


class StoreError(EvigateError):
    """The DuckDB database cannot be used."""


class DatabaseLockedError(StoreError):
    """Another process holds the database file's write lock."""


class DatabaseCorruptError(StoreError):
    """The database file is not a readable DuckDB database."""


class SessionNotFoundError(StoreError):
    """No diagnosis session with that id exists in the audit store."""


class ToolError(EvigateError):
    """An evidence tool was called wrongly (unknown tool, bad arguments) or failed. Recorded, never fatal."""


class ModelError(EvigateError):
    """A language model is unavailable or its file is missing or corrupt."""


class AgentError(EvigateError):
    """An agent raised, timed out, or returned something that honours no contract."""


class AuditValueError(EvigateError, ValueError):
    """A value handed to the audit store cannot be stored: unknown self_evaluation slot, non-JSON value, bad bound."""


class InvocationNotFoundError(StoreError):
    """No tool invocation with that id exists in the audit store."""


class DatasetError(ConfigError):
    """A labelled fixture file is unreadable or invalid, or a dataset it needs cannot be found."""


class InputFileError(EvigateError):
    """A file a user handed in (an answer, a context passage) does not exist or cannot be read as text."""


class QueryError(EvigateError, ValueError):
    """A question that cannot be diagnosed: not text, empty, or longer than the accepted length."""
