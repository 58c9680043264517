"""Greedy decoding that writes a schema's fixed text itself and asks the model only for the real decisions.

Walking the tree from `schema_plan`, the decoder appends keys, brackets, separators and constants as one batch of
tokens (a batch of 8 costs about as much as 2 single steps on the 2-core CPU measured here) and consults the
logits only where the schema leaves a choice:

- a free string: each step takes the best token that may continue it (no quote, backslash or control byte, within
  the length left, valid UTF-8, matching the pattern so far); a token that starts with a quote ends it;
- an enum or constant: the best token that is a prefix of a value still possible; once one value is left, the rest
  of it is appended without asking;
- a list: whether the best token that opens the next item (or a comma) beats the best one that closes the list;
- a choice of shapes (`anyOf`): the shape whose opening token scores best. Objects that differ only in their
  enums (the evidence binding of each tool) are decoded as one object whose enums narrow as values are chosen.

The text is compact JSON valid for the schema by construction. When the token budget runs out the decoder
closes what is open the shortest valid way, so a long answer ends as valid JSON rather than cut off.
Pure: the model is anything with `table`, `tokenize`, `feed` and `logits` (tests use a scripted one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import regex

from evigate.llm.schema_plan import Array, Choice, FreeString, Integer, Literal, Node, Object, Sequential
from evigate.llm.token_choice import (
    DIGIT_BYTES,
    best_of,
    best_string_token,
    clamp,
    dead_end,
    extends_integer,
    first_bytes,
    in_range,
    matches,
)
from evigate.llm.token_table import TokenTable, utf8_open

_ENDS_VALUE = b",]} \n\t\r"
T = TypeVar("T")


class DecodingModel(Protocol):
    """A language model positioned after its prompt: append tokens, read the next-token logits."""

    table: TokenTable

    def tokenize(self, text: bytes) -> list[int]: ...

    def feed(self, tokens: Sequence[int]) -> None: ...

    def logits(self) -> np.ndarray: ...


@dataclass
class Decoded:
    text: str
    tokens: int
    truncated: bool  # the budget ran out and open values were closed early


def decode(node: Node, model: DecodingModel, max_tokens: int) -> Decoded:
    """Write one JSON value for `node`, asking `model` for its choices; at most about `max_tokens` tokens."""
    decoder = _Decoder(model, max_tokens)
    decoder.value(node)
    return Decoded(decoder.out.decode("utf-8", errors="replace"), decoder.written, decoder.closing)


class _Decoder:
    def __init__(self, model: DecodingModel, max_tokens: int) -> None:
        self.model, self.table, self.max_tokens = model, model.table, max_tokens
        self.out = bytearray()
        self.pending = bytearray()  # fixed text not yet given to the model: fed in one batch when logits are needed
        self.written = 0
        self.closing = max_tokens <= 0
        self.positions: list[int] = []  # 1-based position in each enclosing list, innermost last

    # -- emitting ------------------------------------------------------------------------------------------------
    def force(self, text: bytes) -> None:
        self.out += text
        self.pending += text

    def logits(self) -> np.ndarray:
        if self.pending:
            tokens = self.model.tokenize(bytes(self.pending))
            self.pending.clear()
            self._count(len(tokens))
            self.model.feed(tokens)
        return self.model.logits()

    def take(self, token: int) -> bytes:
        piece = self.table.pieces[token]
        self.out += piece
        self._count(1)
        self.model.feed([token])
        return piece

    def _count(self, tokens: int) -> None:
        self.written += tokens
        if self.written >= self.max_tokens:
            self.closing = True

    # -- values --------------------------------------------------------------------------------------------------
    def value(self, node: Node) -> None:
        if isinstance(node, Literal):
            self.literal(node.texts)
        elif isinstance(node, FreeString):
            self.string(node)
        elif isinstance(node, Sequential):
            position = self.positions[-1] if self.positions else 1
            self.force(json.dumps(node.template.replace("{n}", str(position)), ensure_ascii=False).encode("utf-8"))
        elif isinstance(node, Integer):
            self.integer(node)
        elif isinstance(node, Array):
            self.array(node)
        elif isinstance(node, Object):
            self.object(node)
        else:
            self.choice(node)

    def literal(self, texts: Sequence[str]) -> str:
        """Write one of `texts` (JSON texts) and return it."""
        options = [text.encode("utf-8") for text in texts]
        written = b""
        while True:
            live = [option for option in options if option.startswith(written)]
            if len(live) == 1 or self.closing:
                chosen = live[0] if written in live else next(o for o in live if len(o) > len(written))
                self.force(chosen[len(written) :])
                return chosen.decode("utf-8")
            candidates = sorted(
                {t for o in live if len(o) > len(written) for t in self.table.prefixes_of(o[len(written) :])}
            )
            logits = self.logits()
            best = max(candidates, key=lambda token: logits[token]) if candidates else None
            if written in live:  # a value ends here and a longer one goes on (7 vs 72): stop or continue?
                stop = best_of(logits, self.table.starting_with(_ENDS_VALUE))
                if best is None or stop >= logits[best]:
                    return written.decode("utf-8")
            if best is None:  # a vocabulary without the needed byte tokens: write the first value left
                chosen = next(o for o in live if len(o) > len(written))
                self.force(chosen[len(written) :])
                return chosen.decode("utf-8")
            written += self.take(best)

    def string(self, node: FreeString) -> None:
        self.force(b'"')
        pattern = regex.compile(node.pattern.removeprefix("^").removesuffix("$")) if node.pattern else None
        content, chars = bytearray(), 0
        while True:
            can_close = chars >= node.min_length and utf8_open(content) is False and matches(pattern, content)
            room = node.max_length - chars
            if can_close and (self.closing or room <= 0):
                break
            if self.written > 2 * self.max_tokens + node.max_length * 4:  # unsatisfiable pattern: stop anyway
                break
            token = best_string_token(self.table, self.logits(), content, room, pattern, can_close)
            if token is None:
                break
            content += self.take(token)
            chars += int(self.table.chars[token])
        self.force(b'"')

    def integer(self, node: Integer, exclude: set[int] | frozenset[int] = frozenset()) -> int:
        """Write an integer in the node's range, not one of `exclude` (a unique list's earlier items); return it."""
        if self.closing:
            value = clamp(0, node)
            while value in exclude:
                value += 1
            self.force(str(value).encode())
            return value
        digits = b""
        while True:
            logits = self.logits()
            starts = self.table.starting_with(DIGIT_BYTES + b"-")
            options = [
                int(t)
                for t in starts
                if extends_integer(self.table, digits, int(t), node)
                and not dead_end(digits + self.table.pieces[t], node, exclude)
            ]
            best = max(options, key=lambda token: logits[token]) if options else None
            if in_range(digits, node) and int(digits) not in exclude:
                stop = best_of(logits, self.table.starting_with(_ENDS_VALUE))
                if best is None or stop >= logits[best] or self.closing:
                    return int(digits)
            if best is None:
                if digits:  # only at MAX_DIGITS digits: what is written stands
                    return int(digits)
                value = clamp(0, node)  # an empty range: the nearest value it and `exclude` allow
                while value in exclude:
                    value += 1
                self.force(str(value).encode())
                return value
            digits += self.take(best)

    def array(self, node: Array) -> None:
        if node.unique and isinstance(node.item, Literal):
            self.enum_items([node], lambda _: node)
            return
        self.force(b"[")
        taken: set[int] = set()  # integers already in a unique list
        for index in range(node.max_items):
            if index >= node.min_items and (self.closing or not self._goes_on(index, node.item)):
                break
            if index:
                self.force(b", ")
            self.positions.append(index + 1)
            if node.unique and isinstance(node.item, Integer):
                taken.add(self.integer(node.item, exclude=taken))
            else:
                self.value(node.item)
            self.positions.pop()
        self.force(b"]")

    def _goes_on(self, index: int, item: Node) -> bool:
        logits = self.logits()
        opening = b"," if index else first_bytes(item)
        return best_of(logits, self.table.starting_with(opening)) > best_of(logits, self.table.starting_with(b"]"))

    def object(self, node: Object) -> None:
        self.force(b"{")
        for index, (name, child) in enumerate(node.properties):
            self.force(_key(name, index))
            self.value(child)
        self.force(b"}")

    def choice(self, node: Choice) -> None:
        branches = node.branches
        if all(isinstance(b, Object) for b in branches) and len({_names(b) for b in branches}) == 1:  # type: ignore[arg-type]
            self.variants([b for b in branches if isinstance(b, Object)])
            return
        if self.closing:
            self.value(branches[0])
            return
        logits = self.logits()
        scores = [best_of(logits, self.table.starting_with(first_bytes(branch))) for branch in branches]
        self.value(branches[int(np.argmax(scores))])

    def variants(self, live: list[Object]) -> None:
        """Objects with the same keys whose values differ (enums): one object, the choices narrowing as they fall."""
        self.force(b"{")
        for index, name in enumerate(_names(live[0])):
            self.force(_key(name, index))
            nodes = [dict(branch.properties)[name] for branch in live]
            if all(n == nodes[0] for n in nodes):
                self.value(nodes[0])
            elif all(isinstance(n, Literal) for n in nodes):
                chosen = self.literal(list(dict.fromkeys(t for n in nodes for t in n.texts)))  # type: ignore[union-attr]
                live = [b for b, n in zip(live, nodes, strict=True) if chosen in n.texts]  # type: ignore[union-attr]
            elif all(isinstance(n, Array) and isinstance(n.item, Literal) for n in nodes):
                live = self.enum_items(live, lambda branch, name=name: dict(branch.properties)[name])
            else:  # shapes differ: follow the first branch still possible
                live = live[:1]
                self.value(nodes[0])
        self.force(b"}")

    def enum_items(self, live: list[T], array_of: Callable[[T], Array]) -> list[T]:
        """A list of enum items that may depend on a branch (`live`: the branches still possible; `array_of` gives
        each one's list schema): each item narrows the branches to those that allow it; a unique list never
        repeats an item and ends when none is left."""
        first = array_of(live[0])
        self.force(b"[")
        chosen: list[str] = []
        for index in range(first.max_items):
            options = list(dict.fromkeys(t for b in live for t in array_of(b).item.texts))  # type: ignore[union-attr]
            if first.unique:
                options = [text for text in options if text not in chosen]
            if not options or (index >= first.min_items and (self.closing or not self._goes_on(index, first.item))):
                break
            if index:
                self.force(b", ")
            chosen.append(self.literal(options))
            live = [b for b in live if chosen[-1] in array_of(b).item.texts]  # type: ignore[union-attr]
        self.force(b"]")
        return live


def _key(name: str, index: int) -> bytes:
    return (", " if index else "").encode() + json.dumps(name, ensure_ascii=False).encode("utf-8") + b": "


def _names(node: Object) -> tuple[str, ...]:
    return tuple(name for name, _ in node.properties)
