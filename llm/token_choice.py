"""Which token may come next inside a JSON value: the checks `schema_decoder` makes at each step. Pure."""

from __future__ import annotations

import numpy as np
import regex

from evigate.llm.schema_plan import MAX_DIGITS, Array, FreeString, Integer, Literal, Node, Object
from evigate.llm.token_table import TokenTable, utf8_open

SHORTLIST = 64
"""Best-scoring tokens checked one by one before a whole-vocabulary mask is built."""
DIGIT_BYTES = b"0123456789"


def best_of(logits: np.ndarray, ids: np.ndarray) -> float:
    """The highest logit among `ids` (-inf when there are none)."""
    return float(logits[ids].max()) if len(ids) else -np.inf


def best_string_token(
    table: TokenTable,
    logits: np.ndarray,
    content: bytearray,
    room: int,
    pattern: regex.Pattern[str] | None,
    can_close: bool,
) -> int | None:
    """The best token that continues a JSON string holding `content` (`room` characters left); None to close it.

    The best `SHORTLIST` tokens are checked one by one; only when none fits is the whole vocabulary masked (rare: a
    fragment of a character to finish, a pattern to satisfy).
    """
    shortlist = np.argpartition(logits, -SHORTLIST)[-SHORTLIST:]
    for token in shortlist[np.argsort(-logits[shortlist])]:
        if table.first_byte[token] == ord('"'):
            if can_close:
                return None
            continue
        if continues_string(table, int(token), content, room, pattern):
            return int(token)
    allowed = table.string_safe & (table.chars <= room)
    if utf8_open(content) is False:
        allowed &= table.whole & (table.chars > 0)
    close = best_of(logits, table.starting_with(b'"')) if can_close else -np.inf
    for token in np.flatnonzero(allowed)[np.argsort(-logits[allowed])][:4096]:
        if logits[token] <= close:
            break
        if continues_string(table, int(token), content, room, pattern):
            return int(token)
    return None


def continues_string(
    table: TokenTable, token: int, content: bytearray, room: int, pattern: regex.Pattern[str] | None
) -> bool:
    """Whether `token` may extend the string: safe bytes, within the room left, valid UTF-8, the pattern so far."""
    if not table.string_safe[token] or table.chars[token] > room:
        return False
    extended = content + table.pieces[token]
    if pattern is not None:  # patterns are matched on whole characters: no fragments of one
        return utf8_open(extended) is False and matches(pattern, extended, partial=True)
    return utf8_open(extended) is not None


def extends_integer(table: TokenTable, digits: bytes, token: int, node: Integer) -> bool:
    """Whether `token` may follow `digits` in an integer of the node's range (sign first, no leading zero)."""
    piece = table.pieces[token]
    if piece == b"-":
        return not digits and (node.minimum is None or node.minimum < 0)
    if not piece.isdigit():
        return False
    body = (digits + piece).removeprefix(b"-")
    if len(body) > MAX_DIGITS or (len(body) > 1 and body.startswith(b"0")):
        return False
    value = int(digits + piece)
    if value >= 0 and node.maximum is not None and value > node.maximum:
        return False
    return not (value < 0 and node.minimum is not None and value < node.minimum)


def first_bytes(node: Node) -> bytes:
    """The bytes a value of `node` may start with."""
    if isinstance(node, Literal):
        return bytes(sorted({text.encode("utf-8")[0] for text in node.texts}))
    if isinstance(node, FreeString):
        return b'"'
    if isinstance(node, Integer):
        return DIGIT_BYTES + b"-"
    if isinstance(node, Array):
        return b"["
    if isinstance(node, Object):
        return b"{"
    return bytes(sorted({byte for branch in node.branches for byte in first_bytes(branch)}))


def matches(pattern: regex.Pattern[str] | None, content: bytes | bytearray, *, partial: bool = False) -> bool:
    if pattern is None:
        return True
    text = bytes(content).decode("utf-8", errors="ignore")
    return pattern.fullmatch(text, partial=partial) is not None


def in_range(digits: bytes, node: Integer) -> bool:
    if not digits or digits == b"-":
        return False
    value = int(digits)
    return (node.minimum is None or value >= node.minimum) and (node.maximum is None or value <= node.maximum)


def dead_end(digits: bytes, node: Integer, exclude: set[int] | frozenset[int]) -> bool:
    """Whether `digits` is an excluded value that no further digit can turn into an allowed one."""
    if digits == b"-" or int(digits) not in exclude:
        return False
    body = digits.removeprefix(b"-")
    grows = int(digits) * 10
    return body == b"0" or len(body) >= MAX_DIGITS or (node.maximum is not None and grows > node.maximum)


def clamp(value: int, node: Integer) -> int:
    if node.minimum is not None:
        value = max(value, node.minimum)
    if node.maximum is not None:
        value = min(value, node.maximum)
    return value
