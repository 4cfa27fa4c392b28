"""The evaluation sets: streams of articles in arrival order, each with its ground truth."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evaluation.corpora import news_articles, peoples_daily
from evaluation.edits import edit_types
from evaluation.truth import DIFFERENT, DUPLICATE, jaccard_matrix


@dataclass(frozen=True)
class Item:
    id: str
    text: str
    truth: frozenset[str] | None  # earlier items it duplicates; empty: none; None: not scored
    tag: str  # "original", "distractor", the edit type, or "natural"


@dataclass(frozen=True)
class EvalSet:
    name: str
    language: str
    kind: str  # "edited" or "natural"
    items: list[Item]


def corpus(language: str) -> list[str]:
    if language == "en":
        return [a.text for a in news_articles()]
    return list(peoples_daily())


@cache
def corpus_similarity(language: str) -> np.ndarray:
    """Jaccard between every two articles of the language's corpus (computed once)."""
    return jaccard_matrix(corpus(language), language)


def natural(language: str, limit: int | None = None) -> EvalSet:
    """The corpus in its own order; an article duplicates the earlier ones it shares at least
    80% of its shingles with (Jaccard), and is scored as different when it shares under 30%
    with every earlier one."""
    texts = corpus(language)[:limit]
    sim = corpus_similarity(language)
    items = []
    for i, text in enumerate(texts):
        earlier = sim[i, :i]
        best = float(earlier.max()) if i else 0.0
        truth: frozenset[str] | None
        if best >= DUPLICATE:
            truth = frozenset(f"{language}-{j}" for j in np.flatnonzero(earlier >= DUPLICATE))
        elif best < DIFFERENT:
            truth = frozenset()
        else:
            truth = None
        items.append(Item(f"{language}-{i}", text, truth, "natural"))
    return EvalSet(f"{language} natural", language, "natural", items)


def edited(
    language: str, originals: int = 300, distractors: int = 300, seed: int = 2026
) -> list[EvalSet]:
    """One set per edit type: the originals first, then each original's edited copy mixed
    with unrelated distractors. Originals and distractors are drawn from articles that share
    under 30% of their shingles with any other article of the corpus."""
    texts = corpus(language)
    sim = corpus_similarity(language)
    clean = [
        i
        for i in range(len(texts))
        if max(sim[i, :i].max(initial=0), sim[i, i + 1 :].max(initial=0)) < DIFFERENT
    ]
    rng = random.Random(seed)
    chosen = rng.sample(clean, originals + distractors)
    base, others = chosen[:originals], chosen[originals:]
    vocab = _vocabulary(texts, language)
    sets = []
    for edit_name, edit in edit_types(language).items():
        edit_rng = random.Random(f"{seed}-{edit_name}")
        items = [Item(f"o{i}", texts[i], frozenset(), "original") for i in base]
        later = [
            Item(f"c{i}", edit(texts[i], edit_rng, vocab), frozenset({f"o{i}"}), edit_name)
            for i in base
        ]
        later += [Item(f"d{i}", texts[i], frozenset(), "distractor") for i in others]
        edit_rng.shuffle(later)
        sets.append(EvalSet(f"{language} {edit_name}", language, "edited", items + later))
    return sets


def _vocabulary(texts: Sequence[str], language: str) -> list[str]:
    if language == "zh":
        return sorted({c for t in texts[:500] for c in t if "\u4e00" <= c <= "\u9fff"})
    return sorted({w for t in texts[:500] for w in t.split() if w.isalpha()})
