"""Features of a normalised text: word shingles for space-separated scripts, character bigrams
or jieba words for Chinese (Han) runs. A text mixing scripts is cut into runs of one kind each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import pairwise

# Han ideographs: Extension A, CJK Unified Ideographs, compatibility block, Extensions B-G.
HAN_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F))
_HAN = "".join(f"{chr(first)}-{chr(last)}" for first, last in HAN_RANGES)
HAN_CHAR = re.compile(f"[{_HAN}]")
_RUN = re.compile(f"[{_HAN}]+|[^{_HAN}]+")  # within one whitespace-free token

HAN_CHARS_PER_WORD = 2  # for length limits a Han character counts as half a word


class ChineseUnits(StrEnum):
    """The units of Han text: its characters, or jieba's words."""

    CHARACTERS = "characters"
    JIEBA = "jieba"


@dataclass(frozen=True)
class Features:
    """Features of one text, and its length in words (a Han character counts as half)."""

    items: list[str]
    words: float


def tokenize(normalized: str, shingle_size: int = 3, chinese: str = "bigrams") -> Features:
    """Features of an already normalised text (see worker.text.normalize).

    Latin-script (any space-separated) runs give overlapping shingles of `shingle_size` words;
    a run shorter than that gives one feature of all its words. Han runs give character bigrams
    (`chinese="bigrams"`) or jieba words (`chinese="jieba"`). Shingles never cross a run boundary.
    """
    if shingle_size < 1:
        raise ValueError(f"shingle_size must be >= 1, got {shingle_size}")
    cut_han = _han_cutter(chinese)
    tokens = normalized.split()
    if normalized.isascii() or not HAN_CHAR.search(normalized):  # the common case, faster
        return Features(shingles(tokens, shingle_size) if tokens else [], len(tokens))

    items: list[str] = []
    words: list[str] = []
    han: list[str] = []
    n_words = n_han = 0
    for token in tokens:
        for run in _RUN.findall(token) if HAN_CHAR.search(token) else (token,):
            if HAN_CHAR.match(run):
                if words:
                    items += shingles(words, shingle_size)
                    words = []
                han.append(run)
                n_han += len(run)
            else:
                if han:
                    items += cut_han("".join(han))
                    han = []
                words.append(run)
                n_words += 1
    if words:
        items += shingles(words, shingle_size)
    if han:
        items += cut_han("".join(han))
    return Features(items, n_words + n_han / HAN_CHARS_PER_WORD)


def units(tokens: list[str], chinese: ChineseUnits = ChineseUnits.CHARACTERS) -> Features:
    """The units, in order, of a normalised text given as its tokens
    (`normalize.normalized_tokens`): words of space-separated scripts; in Han runs single
    characters (or jieba's words). The search fingerprint's features."""
    if all(map(str.isascii, tokens)):  # no Han: the tokens are the units
        return Features(tokens, len(tokens))
    out: list[str] = []
    n_words = n_han = 0
    for token in tokens:
        if not HAN_CHAR.search(token):
            out.append(token)
            n_words += 1
            continue
        for run in _RUN.findall(token):
            if not HAN_CHAR.match(run):
                out.append(run)
                n_words += 1
                continue
            n_han += len(run)
            if chinese == ChineseUnits.JIEBA:
                out += _jieba_cut()(run)
            else:
                out += run
    return Features(out, n_words + n_han / HAN_CHARS_PER_WORD if n_han else n_words)


def shingles(words: list[str], size: int) -> list[str]:
    if len(words) <= size:
        return [" ".join(words)]
    if size == 3:  # the default, spelled out: about twice as fast as the general form
        return [f"{a} {b} {c}" for a, b, c in zip(words, words[1:], words[2:], strict=False)]
    return list(map(" ".join, zip(*(words[i:] for i in range(size)), strict=False)))


def bigrams(han: str) -> list[str]:
    if len(han) < 2:
        return [han]
    return [a + b for a, b in pairwise(han)]


def _han_cutter(mode: str) -> Callable[[str], list[str]]:
    if mode == "bigrams":
        return bigrams
    if mode == "jieba":
        return _jieba_cut()
    raise ValueError(f"chinese must be 'bigrams' or 'jieba', got {mode!r}")


@cache
def _jieba_cut() -> Callable[[str], list[str]]:
    """rjieba when installed (same segmentation, much faster), else jieba; loaded on first use."""
    try:
        import rjieba

        return rjieba.cut
    except ImportError:
        import jieba

        jieba.setLogLevel(jieba.logging.WARNING)
        return jieba.lcut  # type: ignore[no-any-return]
