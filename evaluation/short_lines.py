"""Short lines as a data team meets them (5-20 words): news headlines, the one-line
descriptions of the English manual pages, and the entries of Perl's changelogs (perldelta),
some sent again with a word or two changed.

A word changed in a line this short leaves too few of its 3-unit shingles for the Jaccard
truth (evaluation/truth.py) to call the copy anything, so these lines have a truth of their
own: the edit distance in units (words; characters of scripts written without spaces)
between a line and each earlier one, n the longer one's length. A line repeats an earlier
one at distance 1, or 2 when n >= 7; it is different from one at distance max(3, n / 4
rounded up) or more; from every earlier line either, or it is not scored. A line of the
sources that repeats an earlier one is not scored either (`_scored`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from evaluation import corpora
from evaluation.datasets import EvalSet, Item
from evaluation.truth import units

SHORTEST, LONGEST = 5, 20  # a line's length in units
FAR = 6  # distances past this are not told apart (a 21-unit pair is different from 6 on)
_ROWS = 512  # lines compared with all the others at once (memory: rows x lines x 4 bytes)


def line_truth(lines: Sequence[str]) -> list[frozenset[int] | None]:
    """For each line, the earlier lines it repeats (by position); empty when it differs from
    every earlier one; None (not scored) otherwise."""
    codes: dict[str, str] = {}  # each distinct unit as one character, for rapidfuzz
    coded = [
        "".join(codes.setdefault(u, chr(0xF0000 + len(codes))) for u in units(line))
        for line in lines
    ]
    lengths = np.array([len(c) for c in coded])
    truth: list[frozenset[int] | None] = []
    for start in range(0, len(coded), _ROWS):
        rows = coded[start : start + _ROWS]
        near = cdist(rows, coded[: start + len(rows)], scorer=Levenshtein.distance,
                     score_cutoff=FAR, dtype=np.int32, workers=1)  # fmt: skip
        for r, distances in enumerate(near):
            i = start + r
            earlier = distances[:i]
            longer = np.maximum(lengths[:i], lengths[i])
            repeated = np.flatnonzero((earlier <= 1) | ((earlier == 2) & (longer >= 7)))
            if len(repeated):
                truth.append(frozenset(repeated.tolist()))
            elif np.all(earlier >= np.maximum(3, -(-longer // 4))):
                truth.append(frozenset())
            else:
                truth.append(None)
    return truth


def source_lines() -> list[str]:
    """Every distinct line of the three sources, in their order."""
    return list(dict.fromkeys(_lines()))


def short_lines_set(seed: int = 18, copies: int = 1500) -> EvalSet:
    """Every distinct line of the three sources, in a shuffled order, then `copies` of them
    again later with one of EDITS, each after its original."""
    rng = random.Random(seed)
    lines = source_lines()
    rng.shuffle(lines)
    vocabulary = sorted({u for line in lines for u in line.split() if u.isalpha()})
    # Each line at its place n, each copy at a random later place: sorted by place.
    placed = [(float(n), f"l{n}", line, "line") for n, line in enumerate(lines)]
    for n in rng.sample(range(len(lines)), copies):
        name, edit = rng.choice(list(EDITS.items()))
        later = rng.uniform(n + 0.5, len(lines))
        placed.append((later, f"l{n}-{name}", edit(lines[n], rng, vocabulary), name))
    stream = [(item_id, text, tag) for _, item_id, text, tag in sorted(placed)]
    truth = line_truth([text for _, text, _ in stream])
    ids = [item_id for item_id, _, _ in stream]
    items = [
        Item(item_id, text, _scored(t, tag, ids), tag)
        for (item_id, text, tag), t in zip(stream, truth, strict=True)
    ]
    return EvalSet("short lines", "en", "short lines", items)


def _scored(truth: frozenset[int] | None, tag: str, ids: Sequence[str]) -> frozenset[str] | None:
    """A line of the sources that repeats an earlier one is not scored: most are entries of
    one template ("X has been upgraded from version A to B"), and whether those are copies
    is the user's call. The planted copies and the lines unlike any earlier one are."""
    if truth is None or (truth and tag == "line"):
        return None
    return frozenset(ids[j] for j in truth)


def _lines() -> Iterator[str]:
    for line in [*corpora.news_titles(), *_man_descriptions(), *_changelog_entries()]:
        line = " ".join(line.split())
        if SHORTEST <= len(units(line)) <= LONGEST:
            yield line


_NAME = re.compile(r"\nNAME\n\s+(.+?)\n\n", re.DOTALL)


def _man_descriptions() -> Iterator[str]:
    """The NAME line of each English manual page ("iconv - convert text from one ...")."""
    for _, text in corpora.english_man_pages():
        found = _NAME.search(text)
        if found:
            yield found.group(1)


_ITEM = re.compile(r"^=item \*\s*\n\n(.+?)\n\n", re.MULTILINE | re.DOTALL)
_POD_LINK = re.compile(r"L<([^|>]*)\|[^>]*>")  # L<text|target>: the text
_POD_CODE = re.compile(r"[BCEFIL]<+\s*(.*?)\s*>+", re.DOTALL)


def _changelog_entries() -> Iterator[str]:
    """The bulleted entries of Perl's perldelta pages, their POD markup taken off."""
    for name, pod in corpora.perl_pods():
        if name.startswith("perl5") and name.endswith("delta"):
            for found in _ITEM.finditer(pod):
                yield _POD_CODE.sub(r"\1", _POD_LINK.sub(r"\1", found.group(1)))


Edit = Callable[[str, random.Random, Sequence[str]], str]


def _substitute(count: int) -> Edit:
    def edit(line: str, rng: random.Random, vocabulary: Sequence[str]) -> str:
        words = line.split()
        for at in rng.sample(range(len(words)), min(count, len(words))):
            words[at] = rng.choice(vocabulary)
        return " ".join(words)

    return edit


def _insert(line: str, rng: random.Random, vocabulary: Sequence[str]) -> str:
    words = line.split()
    words.insert(rng.randrange(len(words) + 1), rng.choice(vocabulary))
    return " ".join(words)


def _delete(line: str, rng: random.Random, vocabulary: Sequence[str]) -> str:
    words = line.split()
    del words[rng.randrange(len(words))]
    return " ".join(words)


def _substitute_and_insert(line: str, rng: random.Random, vocabulary: Sequence[str]) -> str:
    return _insert(_substitute(1)(line, rng, vocabulary), rng, vocabulary)


def _cosmetic(line: str, rng: random.Random, vocabulary: Sequence[str]) -> str:
    return line.upper() + rng.choice(["!", ".", " ..."])


EDITS: dict[str, Edit] = {
    "one word": _substitute(1),
    "two words": _substitute(2),
    "a word added": _insert,
    "a word cut": _delete,
    "one word and one added": _substitute_and_insert,
    "case and punctuation": _cosmetic,
}
