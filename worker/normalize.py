"""Text normalisation: the canonical form that features and the exact-content hash are built on."""

from __future__ import annotations

import sys
import unicodedata
from functools import cache


def normalize(text: str) -> str:
    """NFKC, case-folded, punctuation/symbols/control characters to spaces, whitespace collapsed.

    Two texts that differ only in case, whitespace or punctuation normalise to the same string.
    """
    return " ".join(normalized_tokens(text))


def normalized_tokens(text: str) -> list[str]:
    """The whitespace-separated tokens of `normalize(text)`."""
    if text.isascii():  # NFKC leaves ASCII as it is and casefold is lower(): a faster path
        return text.encode("ascii").translate(ascii_table()).decode("ascii").split()
    folded = unicodedata.normalize("NFKC", text).casefold()
    # casefold can leave a non-NFKC string behind (e.g. 'ǰ' -> 'ǰ'), so normalise again.
    folded = unicodedata.normalize("NFKC", folded)
    return folded.translate(_table()).split()


@cache
def ascii_table() -> bytes:
    """For ASCII text, all of `normalize` but collapsing whitespace, as one bytes.translate
    table: upper case to lower, and what `_table()` maps to a space (it deletes no ASCII)."""
    table = _table()
    return bytes(ord(table.get(ord(chr(code).lower())) or chr(code).lower())
                 for code in range(128)).ljust(256, b" ")


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
