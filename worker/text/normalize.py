"""Text normalisation: the canonical form that features and the exact-content hash are built on."""

from __future__ import annotations

import sys
import unicodedata
from functools import cache

import numpy as np


def normalize(text: str) -> str:
    """NFKC, case-folded, punctuation/symbols/control characters to spaces, whitespace collapsed.

    Two texts that differ only in case, whitespace or punctuation normalise to the same string.
    """
    return " ".join(normalized_tokens(text))


def normalized_tokens(text: str) -> list[str]:
    """The whitespace-separated tokens of `normalize(text)`."""
    if text.isascii():
        return text.encode("ascii").translate(ascii_table()).decode("ascii").split()
    return _fold(text).split()


def folded_utf8(text: str) -> bytes:
    """`normalize(text)` before its whitespace is collapsed (words are separated by one or
    more spaces, and no other whitespace is left), in UTF-8."""
    if text.isascii():
        return text.encode("ascii").translate(ascii_table())
    return _fold(text).encode("utf-8")


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    # casefold can leave a non-NFKC string behind (e.g. 'ǰ' -> 'ǰ'), so normalise again.
    folded = unicodedata.normalize("NFKC", folded)
    # folded.translate(_table()), but in numpy: str.translate looks every character up in a
    # dict, which is most of the cost of normalising Chinese text.
    # ("surrogatepass": a lone surrogate is a code point like any other, deleted by the table)
    points = np.frombuffer(folded.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    points = _code_point_table()[points]
    kept: bytes = points[points != _DELETED].tobytes()
    return kept.decode("utf-32-le")


_DELETED = np.uint32(0xFFFFFFFF)


@cache
def _code_point_table() -> np.ndarray:
    """`_table()` as an array: code point -> the code point it becomes, or _DELETED."""
    points = np.arange(sys.maxunicode + 1, dtype="<u4")
    for code, replacement in _table().items():
        points[code] = _DELETED if replacement is None else ord(replacement)
    return points


@cache
def ascii_table() -> bytes:
    """For ASCII text, all of `normalize` but collapsing whitespace, as one bytes.translate
    table: upper case to lower, and what `_table()` maps to a space (it deletes no ASCII).
    NFKC leaves ASCII as it is and casefold is lower(): a much faster path."""
    table = _table()
    return bytes(
        ord(table.get(ord(chr(code).lower())) or chr(code).lower()) for code in range(128)
    ).ljust(256, b" ")


@cache
def _table() -> dict[int, str | None]:
    """Code point -> replacement for every character that is not part of a word.

    Built on first use (about 0.3 s), not at import.
    """
    table: dict[int, str | None] = {}
    for code in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(code))
        if category[0] in "PSZ" or category == "Cc":
            table[code] = " "
        elif category in ("Cf", "Cs", "Co"):
            # Zero-width and format characters, lone surrogates, private use: they carry no
            # visible text, and a zero-width space inside a word must not split it.
            table[code] = None
    return table
