"""The tokenizer the worker used before its units: overlapping shingles of words, and Han text
cut into character bigrams or jieba words, in one pass. Kept as a peer that the evaluation and
the benchmarks measure against, not as a path of the worker."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

from worker.text.features import HAN_CHAR, HAN_CHARS_PER_WORD, HAN_RUN, Features, jieba_cut


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
        for run in HAN_RUN.findall(token) if HAN_CHAR.search(token) else (token,):
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
        return jieba_cut()
    raise ValueError(f"chinese must be 'bigrams' or 'jieba', got {mode!r}")
