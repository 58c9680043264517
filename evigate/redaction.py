"""Credentials out of everything evigate records or prints: the one place that knows what a secret looks like in text.

A URL's password (`http://admin:PASSWORD@host`), a secret-named parameter (`?password=`, `&token=`, `api_key=`,
a libpq `password=... ` pair) and an `Authorization` header value (`Bearer …`, `Basic …`) are replaced by `***`,
wherever they sit in the text: a settings snapshot, a source URL inside a connection error, a tool's output preview,
a `domain check` row. The user name, host, path and every other parameter stay, so the message still says where.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"

SECRET_KEYS = (
    "password", "passwd", "pwd", "sslpassword", "secret", "client_secret", "token", "access_token",
    "refresh_token", "id_token", "auth_token", "api_key", "apikey", "api-key", "x-api-key", "private_token",
)
"""Parameter names whose value is a credential (compared case-insensitively)."""

_SECRET_KEY_SET = frozenset(SECRET_KEYS)
# scheme://user:password@  (the password may hold anything but '@', '/' and whitespace)
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^@\s/]*@", re.IGNORECASE)
# key=value after a start, a space, '?', '&', ';' or ',' (query strings, DSNs, logfmt); value up to a separator.
_KEY_VALUE = re.compile(
    r"(?P<head>(?:^|(?<=[\s?&;,({\[\"']))(?:" + "|".join(re.escape(key) for key in SECRET_KEYS)
    + r")\s*[=:]\s*)(?P<quote>[\"']?)(?P<value>[^\s&;,\"')}\]]+)",
    re.IGNORECASE,
)
_AUTH_HEADER = re.compile(
    r"(?P<head>\bAuthorization[\"']?\s*[:=]\s*[\"']?(?:(?:Bearer|Basic|Token)\s+)?|\bBearer\s+)[^\s\"',;]{8,}",
    re.IGNORECASE,
)


def redact_secrets(text: str) -> str:
    """`text` with every credential it holds (see the module docstring) replaced by `***`."""
    if not isinstance(text, str) or not text:
        return text
    # Cheap substring tests first: most tool output holds no credential, and the patterns cost ~1 ms per KB.
    lowered = text.lower()
    if "://" in text and "@" in text:
        text = _URL_PASSWORD.sub(rf"\g<head>{REDACTED}@", text)
    if any(key in lowered for key in SECRET_KEYS):
        text = _KEY_VALUE.sub(lambda match: f"{match.group('head')}{match.group('quote')}{REDACTED}", text)
    if "bearer" in lowered or "authorization" in lowered:
        text = _AUTH_HEADER.sub(rf"\g<head>{REDACTED}", text)
    return text


def redact_url(url: str) -> str:
    """`url` with its password (in the authority or a secret-named query parameter) replaced by `***`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        credentials, host = netloc.rsplit("@", 1)
        if ":" in credentials:
            netloc = f"{credentials.split(':', 1)[0]}:{REDACTED}@{host}"
    query = urlencode(
        [(key, REDACTED if key.lower() in _SECRET_KEY_SET else value)
         for key, value in parse_qsl(parts.query, keep_blank_values=True)],
        safe="*",
    )  # fmt: skip
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_value(value: Any) -> Any:
    """`value` (text, or dicts and lists of it, as JSON-ready data) with `redact_secrets` applied to every string;
    a value under a secret-named key is replaced whole."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, dict):
        return {key: REDACTED if isinstance(key, str) and key.lower() in _SECRET_KEY_SET and value_set(item)
                else redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    return value


def value_set(item: Any) -> bool:
    """Whether a secret-named key holds something to hide (None, '' and False stay as they are: nothing leaks)."""
    return item not in (None, "", False)
