"""Scoring a detector's answers against the ground truth. Pure."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evaluation.datasets import Item
from evaluation.tokens import tokenize
from worker.text.normalize import normalize


@dataclass
class Score:
    tp: int = 0  # a duplicate, flagged as a duplicate of an item it repeats
    fp: int = 0  # not a duplicate, flagged
    fn: int = 0  # a duplicate, missed or flagged as a duplicate of an item it does not repeat
    tn: int = 0
    wrong_pointer: int = 0  # of fn: flagged, but pointing at an item it does not repeat

    def add(self, truth: frozenset[str], predicted: str | None) -> None:
        """Strict: a duplicate counts only when it points at an item it repeats."""
        if truth and predicted in truth:
            self.tp += 1
        elif truth:
            self.fn += 1
            self.wrong_pointer += predicted is not None
        elif predicted is not None:
            self.fp += 1
        else:
            self.tn += 1

    def merge(self, other: Score) -> None:
        """Adds another score's counts to this one (for pooled tables)."""
        for name in ("tp", "fp", "fn", "tn", "wrong_pointer"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def precision(self) -> float:
        flagged = self.tp + self.fp
        return self.tp / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        duplicates = self.tp + self.fn
        return self.tp / duplicates if duplicates else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class Scores:
    overall: Score = field(default_factory=Score)
    by_group: dict[str, Score] = field(default_factory=lambda: defaultdict(Score))


LENGTH_BUCKETS = (
    (100, "a: under 100 words"),
    (300, "b: 100-299 words"),
    (1000, "c: 300-999 words"),
    (None, "d: 1000 words or more"),
)


def length_bucket(text: str) -> str:
    """The item's length class; a Han character counts as half a word."""
    words = tokenize(normalize(text)).words
    return next(label for limit, label in LENGTH_BUCKETS if limit is None or words < limit)


def score(
    items: Sequence[Item],
    predicted: Sequence[str | None],
    group: Callable[[Item], str] | None = None,
) -> Scores:
    """Precision/recall over the scored items, overall and by `group` (e.g. length)."""
    scores = Scores()
    for item, guess in zip(items, predicted, strict=True):
        if item.truth is None:
            continue
        scores.overall.add(item.truth, guess)
        if group is not None:
            scores.by_group[group(item)].add(item.truth, guess)
    return scores
