"""Features of a normalised text: word shingles for space-separated scripts, character bigrams
or jieba words for Chinese (Han) runs. A text mixing scripts is cut into runs of one kind each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

# Han ideographs: CJK Unified Ideographs, Extension A, compatibility block, Extensions B-G.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_RUN = re.compile(f"([{_HAN}]+)|([^\\s{_HAN}]+)")

HAN_CHARS_PER_WORD = 2  # for length limits a Han character counts as half a word


@dataclass(frozen=True)
class Features:
    """Features of one text, and its length in words (a Han character counts as half)."""

    items: list[str]
    words: float


def tokenize(normalized: str, shingle_size: int = 3, chinese: str = "bigrams") -> Features:
    """Features of an already normalised text (see worker.normalize).

    Latin-script (any space-separated) runs give overlapping shingles of `shingle_size` words;
    a run shorter than that gives one feature of all its words. Han runs give character bigrams
    (`chinese="bigrams"`) or jieba words (`chinese="jieba"`). Shingles never cross a run boundary.
    """
    if shingle_size < 1:
        raise ValueError(f"shingle_size must be >= 1, got {shingle_size}")
    cut_han = _han_cutter(chinese)
    items: list[str] = []
    n_words = 0
    n_han = 0
    words: list[str] = []
    han_parts: list[str] = []

    def flush_words() -> None:
        if words:
            items.extend(shingles(words, shingle_size))
            words.clear()

    def flush_han() -> None:
        if han_parts:
            items.extend(cut_han("".join(han_parts)))
            han_parts.clear()

    for match in _RUN.finditer(normalized):
        han, word = match.group(1), match.group(2)
        if han:
            flush_words()
            han_parts.append(han)
            n_han += len(han)
        else:
            flush_han()
            words.append(word)
            n_words += 1
    flush_words()
    flush_han()
    return Features(items, n_words + n_han / HAN_CHARS_PER_WORD)


def shingles(words: list[str], size: int) -> list[str]:
    if len(words) <= size:
        return [" ".join(words)]
    return [" ".join(words[i : i + size]) for i in range(len(words) - size + 1)]


def bigrams(han: str) -> list[str]:
    if len(han) < 2:
        return [han]
    return [han[i : i + 2] for i in range(len(han) - 1)]


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
