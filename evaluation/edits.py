"""Edits that turn an article into a near-duplicate of itself. Pure and seeded.

English edits work on words, Chinese edits on Han characters (a Chinese "word" substitution
replaces one character). Sentences end at . ! ? (and 。！？ in Chinese).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

PROMOTION = {
    "en": "Subscribe today and get three months of unlimited access for just one dollar.",
    "zh": "现在订阅即可享受三个月无限阅读，仅需一元。",
}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_SPACES = re.compile(r"(\s+)")

Edit = Callable[[str, random.Random, Sequence[str]], str]


def substitute(text: str, fraction: float | None, rng: random.Random, vocab: Sequence[str]) -> str:
    """Replace one unit (fraction None) or `fraction` of the units with others from `vocab`.
    Units are words, or Han characters when the text has any."""
    if _HAN.search(text):
        chars = list(text)
        slots = [i for i, c in enumerate(chars) if _HAN.match(c)]
        for i in rng.sample(slots, _count(len(slots), fraction)):
            chars[i] = _other(chars[i], vocab, rng)
        return "".join(chars)
    parts = _SPACES.split(text)  # words at even positions, the whitespace between at odd
    slots = [i for i in range(0, len(parts), 2) if parts[i]]
    for i in rng.sample(slots, _count(len(slots), fraction)):
        parts[i] = _other(parts[i], vocab, rng)
    return "".join(parts)


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def insert_promotion(text: str, rng: random.Random, language: str) -> str:
    parts = sentences(text)
    at = rng.randrange(1, len(parts)) if len(parts) > 1 else len(parts)
    joiner = "" if language == "zh" else " "
    return joiner.join([*parts[:at], PROMOTION[language], *parts[at:]])


def delete_run(text: str, rng: random.Random, language: str, fraction: float = 0.15) -> str:
    """Delete a run of consecutive sentences, about `fraction` of them (at least one)."""
    parts = sentences(text)
    if len(parts) < 3:
        return text
    run = max(1, round(len(parts) * fraction))
    start = rng.randrange(1, len(parts) - run)  # keep the first and the last sentence
    joiner = "" if language == "zh" else " "
    return joiner.join(parts[:start] + parts[start + run :])


def truncate_head(text: str, fraction: float = 0.10) -> str:
    """Drop the first `fraction` of the text (by words; by characters in Chinese)."""
    if _HAN.search(text):
        return text[round(len(text) * fraction) :]
    words = text.split()
    return " ".join(words[round(len(words) * fraction) :])


def cosmetic(text: str, rng: random.Random) -> str:
    """Only whitespace, case and punctuation change: the words stay the same."""
    out = []
    for ch in text:
        roll = rng.random()
        if ch == " " and roll < 0.3:
            out.append(rng.choice(["  ", "\n", " \t "]))
        elif ch in ",;" and roll < 0.5:
            out.append(rng.choice([" -", ";", " ,"]))  # never removed: "1,000" stays 2 words
        elif ch.isalpha() and roll < 0.05:
            out.append(ch.swapcase())
        else:
            out.append(ch)
    return "".join(out) + rng.choice(["", "!", " ..."])


def edit_types(language: str) -> dict[str, Edit]:
    """The edit types of the evaluation, by name."""
    return {
        "one unit substituted": lambda t, r, v: substitute(t, None, r, v),
        "1% substituted": lambda t, r, v: substitute(t, 0.01, r, v),
        "3% substituted": lambda t, r, v: substitute(t, 0.03, r, v),
        "5% substituted": lambda t, r, v: substitute(t, 0.05, r, v),
        "promotion inserted": lambda t, r, v: insert_promotion(t, r, language),
        "sentences deleted": lambda t, r, v: delete_run(t, r, language),
        "first 10% truncated": lambda t, r, v: truncate_head(t),
        "whitespace, case, punctuation": lambda t, r, v: cosmetic(t, r),
    }


def _count(units: int, fraction: float | None) -> int:
    if units == 0:
        return 0
    return 1 if fraction is None else min(units, max(1, round(units * fraction)))


def _other(unit: str, vocab: Sequence[str], rng: random.Random) -> str:
    for _ in range(10):
        choice = rng.choice(vocab)
        if choice != unit:
            return choice
    return unit + "x"
