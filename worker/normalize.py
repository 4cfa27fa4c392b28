"""Text normalisation: the canonical form that features and the exact-content hash are built on."""

from __future__ import annotations

import sys
import unicodedata
from functools import cache


def normalize(text: str) -> str:
    """NFKC, case-folded, punctuation/symbols/control characters to spaces, whitespace collapsed.

    Two texts that differ only in case, whitespace or punctuation normalise to the same string.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    # casefold can leave a non-NFKC string behind (e.g. 'ǰ' -> 'ǰ'), so normalise again.
    folded = unicodedata.normalize("NFKC", folded)
    return " ".join(folded.translate(_table()).split())


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
