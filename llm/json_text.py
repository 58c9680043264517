"""Repair the one JSON defect llama.cpp output shows in practice: raw control characters inside strings.

Outside a JSON grammar (free decoding, `json_object` mode) small models write a literal newline or tab
inside a string value; strict parsers reject that. Escaping them is lossless and leaves valid JSON
unchanged. Pure: no I/O, no dspy.
"""

from __future__ import annotations

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def escape_control_chars_in_strings(text: str) -> str:
    """Escape raw control characters (U+0000–U+001F) that occur inside JSON string literals.

    Characters outside strings (indentation, newlines between tokens) are kept as they are, so the
    result parses wherever the only defect was an unescaped control character. Text that is not JSON at
    all comes back unchanged apart from such characters between quotes.
    """
    out: list[str] = []
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
                if char < " ":  # a backslash followed by a raw control char: keep one escape, not two
                    out.append(_escape(char)[1:])
                    continue
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char < " ":
                out.append(_escape(char))
                continue
        elif char == '"':
            in_string = True
        out.append(char)
    return "".join(out)


def _escape(char: str) -> str:
    return _ESCAPES.get(char, f"\\u{ord(char):04x}")


def repair_json_text(text: str) -> str:
    """`text` with raw control characters escaped when, and only when, that turns it into valid JSON.

    Free text (DSPy's `[[ ## field ## ]]` format, prose with quotes) is returned untouched, so this is safe
    on every completion whatever format was asked for.
    """
    import json

    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        json.loads(stripped)
        return text
    except ValueError:
        pass
    escaped = escape_control_chars_in_strings(text)
    try:
        json.loads(escaped)
    except ValueError:
        return text
    return escaped
