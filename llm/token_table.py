"""What each token of a vocabulary can be inside JSON: computed once per model, as arrays the decoder masks with.

Pure: built from the tokens' byte pieces (llama.cpp's `token_to_piece`), no model needed, so tests build small ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_DIGITS = frozenset(b"0123456789")


@dataclass
class TokenTable:
    """Per-token facts, indexed by token id.

    Attributes:
        pieces: the bytes each token stands for (empty for control tokens).
        string_safe: the piece may sit inside a JSON string as is: no quote, backslash or control byte.
        whole: the piece decodes as UTF-8 by itself (not a fragment of a multi-byte character).
        chars: how many characters the piece starts (bytes that are not UTF-8 continuation bytes).
        digits: the piece is one or more ASCII digits.
        first_byte: the piece's first byte, -1 when empty.
        by_piece: a token id for each distinct piece (the lowest).
    """

    pieces: list[bytes]
    string_safe: np.ndarray = field(init=False)
    whole: np.ndarray = field(init=False)
    chars: np.ndarray = field(init=False)
    digits: np.ndarray = field(init=False)
    first_byte: np.ndarray = field(init=False)
    by_piece: dict[bytes, int] = field(init=False)
    _by_first: dict[int, np.ndarray] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        count = len(self.pieces)
        self.string_safe = np.zeros(count, dtype=bool)
        self.whole = np.zeros(count, dtype=bool)
        self.chars = np.zeros(count, dtype=np.int32)
        self.digits = np.zeros(count, dtype=bool)
        self.first_byte = np.full(count, -1, dtype=np.int32)
        self.by_piece = {}
        for token, piece in enumerate(self.pieces):
            if not piece:
                continue
            self.by_piece.setdefault(piece, token)
            self.first_byte[token] = piece[0]
            self.string_safe[token] = _string_safe(piece)
            self.whole[token] = _decodes(piece)
            self.chars[token] = sum(1 for byte in piece if byte & 0xC0 != 0x80)
            self.digits[token] = all(byte in _DIGITS for byte in piece)

    def __len__(self) -> int:
        return len(self.pieces)

    def starting_with(self, first_bytes: bytes) -> np.ndarray:
        """Ids of the tokens whose piece starts with one of `first_bytes` (cached per set)."""
        key = hash(bytes(sorted(set(first_bytes))))
        found = self._by_first.get(key)
        if found is None:
            found = np.flatnonzero(np.isin(self.first_byte, list(set(first_bytes)))).astype(np.int64)
            self._by_first[key] = found
        return found

    def prefixes_of(self, text: bytes) -> list[int]:
        """Ids of the tokens whose piece is a non-empty prefix of `text` (one per distinct prefix)."""
        found = []
        for end in range(1, len(text) + 1):
            token = self.by_piece.get(text[:end])
            if token is not None:
                found.append(token)
        return found


def _string_safe(piece: bytes) -> bool:
    return all(byte >= 0x20 and byte != 0x7F and byte != _QUOTE and byte != _BACKSLASH for byte in piece)


def _decodes(piece: bytes) -> bool:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def utf8_open(data: bytes | bytearray) -> bool | None:
    """Whether `data` ends inside a multi-byte character (True), ends cleanly (False), or is not UTF-8 (None)."""
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as error:
        return True if error.reason == "unexpected end of data" and error.end == len(data) else None
    return False
