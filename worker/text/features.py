"""The units of a normalised text: words of scripts written with spaces between words (Latin,
Cyrillic, Greek, Arabic, Hangul, ...); single characters of scripts written without (Han,
kana, Thai, Lao, Khmer, Myanmar, Tibetan), or jieba's words for Han. A text mixing scripts
is cut into runs of one kind each.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

# Han ideographs: Extension A, CJK Unified Ideographs, compatibility block, Extensions B-G.
HAN_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F))
_HAN = "".join(f"{chr(first)}-{chr(last)}" for first, last in HAN_RANGES)
HAN_CHAR = re.compile(f"[{_HAN}]")
HAN_RUN = re.compile(f"[{_HAN}]+|[^{_HAN}]+")  # within one whitespace-free token

# Scripts written without spaces between words: each character is a unit.
CHARACTER_RANGES = (
    *HAN_RANGES,
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
)
_CHARS = "".join(f"{chr(first)}-{chr(last)}" for first, last in CHARACTER_RANGES)
CHARACTER_SCRIPT = re.compile(f"[{_CHARS}]")
_CHARACTER_RUN = re.compile(f"[{_CHARS}]+|[^{_CHARS}]+")  # within one whitespace-free token

# For length limits a character of those scripts counts as half a word.
HAN_CHARS_PER_WORD = 2


def words_of(units: int, characters: int) -> float:
    """A text's length in words, from its number of units and how many of them are
    characters (an int when none are, as `units` gives)."""
    return units - characters + characters / HAN_CHARS_PER_WORD if characters else units


class ChineseUnits(StrEnum):
    """The units of Han text: its characters, or jieba's words."""

    CHARACTERS = "characters"
    JIEBA = "jieba"


@dataclass(frozen=True)
class Features:
    """The units (or features) of one text, and its length in words (a Han character counts
    as half)."""

    items: list[str]
    words: float


def units(tokens: list[str], chinese: ChineseUnits = ChineseUnits.CHARACTERS) -> Features:
    """The units, in order, of a normalised text given as its tokens
    (`normalize.normalized_tokens`): words of space-separated scripts; single characters of
    scripts written without spaces (in Han runs jieba's words instead, with
    `ChineseUnits.JIEBA`). The search fingerprint's features."""
    if all(map(str.isascii, tokens)):  # the tokens are the units
        return Features(tokens, len(tokens))
    out: list[str] = []
    n_words = n_chars = 0
    for token in tokens:
        if not CHARACTER_SCRIPT.search(token):
            out.append(token)
            n_words += 1
            continue
        for run in _CHARACTER_RUN.findall(token):
            if not CHARACTER_SCRIPT.match(run):
                out.append(run)
                n_words += 1
                continue
            n_chars += len(run)
            if chinese == ChineseUnits.JIEBA and HAN_CHAR.search(run):
                for part in HAN_RUN.findall(run):
                    out += jieba_cut()(part) if HAN_CHAR.match(part) else part
            else:
                out += run
    return Features(out, n_words + n_chars / HAN_CHARS_PER_WORD if n_chars else n_words)


@cache
def jieba_cut() -> Callable[[str], list[str]]:
    """rjieba when installed (same segmentation, much faster), else jieba; loaded on first use."""
    try:
        import rjieba

        return rjieba.cut
    except ImportError:
        import jieba

        jieba.setLogLevel(jieba.logging.WARNING)
        return jieba.lcut  # type: ignore[no-any-return]
