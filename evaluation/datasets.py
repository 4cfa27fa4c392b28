"""The evaluation sets: streams of items in arrival order, each item with its ground truth
(evaluation/truth.py: the earlier items it is a near-duplicate of by exact Jaccard), and the
news sets (edited copies of real articles, and each corpus in its own order)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evaluation.corpora import news_articles, peoples_daily
from evaluation.edits import edit_types
from evaluation.truth import DIFFERENT, jaccard_matrix, shingle_set, stream_truth


@dataclass(frozen=True)
class Item:
    id: str
    text: str
    truth: frozenset[str] | None  # earlier items it duplicates; empty: none; None: not scored
    tag: str  # where it comes from: "original", "natural", an edit's name, ...


@dataclass(frozen=True)
class EvalSet:
    name: str
    language: str
    kind: str  # what users feed it: "news", "mail", "html", "legal", "manuals", "short", ...
    items: list[Item]


def with_truth(
    name: str,
    language: str,
    kind: str,
    stream: Sequence[tuple[str, str, str]],
    truth_texts: Sequence[str] | None = None,
) -> EvalSet:
    """An evaluation set from (id, text, tag) in arrival order, its truth computed over the
    texts, or over `truth_texts` where what an item repeats is a part of it (a page's
    content without its site's template)."""
    ids = [item_id for item_id, _, _ in stream]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name}: item ids repeat")
    truth = stream_truth(truth_texts or [text for _, text, _ in stream])
    items = [
        Item(item_id, text, None if t is None else frozenset(ids[j] for j in t), tag)
        for (item_id, text, tag), t in zip(stream, truth, strict=True)
    ]
    return EvalSet(name, language, kind, items)


def corpus(language: str) -> list[str]:
    if language == "en":
        return [a.text for a in news_articles()]
    return list(peoples_daily())


@cache
def corpus_similarity(language: str) -> np.ndarray:
    """Jaccard between every two articles of the language's corpus (computed once)."""
    return jaccard_matrix([shingle_set(t) for t in corpus(language)])


def natural(language: str, limit: int | None = None) -> EvalSet:
    """The news corpus in its own order."""
    texts = corpus(language)[:limit]
    stream = [(f"{language}-{i}", text, "natural") for i, text in enumerate(texts)]
    return with_truth(f"{language} natural", language, "news", stream)


def clean_articles(language: str) -> list[int]:
    """Articles that share under DIFFERENT with every other article of the corpus."""
    sim = corpus_similarity(language)
    n = len(sim)
    return [
        i
        for i in range(n)
        if max(sim[i, :i].max(initial=0), sim[i, i + 1 :].max(initial=0)) < DIFFERENT
    ]


def edited(
    language: str, originals: int = 300, distractors: int = 300, seed: int = 2026
) -> list[EvalSet]:
    """One set per edit type: the originals first, then each original's edited copy mixed
    with unrelated distractors (articles that share under DIFFERENT with any other)."""
    texts = corpus(language)
    rng = random.Random(seed)
    chosen = rng.sample(clean_articles(language), originals + distractors)
    base, others = chosen[:originals], chosen[originals:]
    vocab = vocabulary(texts, language)
    sets = []
    for edit_name, edit in edit_types(language).items():
        edit_rng = random.Random(f"{seed}-{edit_name}")
        stream = [(f"o{i}", texts[i], "original") for i in base]
        later = [(f"c{i}", edit(texts[i], edit_rng, vocab), edit_name) for i in base]
        later += [(f"d{i}", texts[i], "distractor") for i in others]
        edit_rng.shuffle(later)
        sets.append(with_truth(f"{language} {edit_name}", language, "news", stream + later))
    return sets


def mixed_edits(
    language: str, originals: int = 300, distractors: int = 300, seed: int = 2027
) -> EvalSet:
    """Edited news as a stream: originals, then one copy of each with an edit of a random
    type (one word, 1-5% of the words, a promotion, sentences cut, the lead cut, cosmetics),
    mixed with distractors."""
    texts = corpus(language)
    rng = random.Random(seed)
    chosen = rng.sample(clean_articles(language), originals + distractors)
    base, others = chosen[:originals], chosen[originals:]
    vocab = vocabulary(texts, language)
    edits = list(edit_types(language).items())
    stream = [(f"o{i}", texts[i], "original") for i in base]
    later = []
    for i in base:
        name, edit = rng.choice(edits)
        later.append((f"c{i}", edit(texts[i], rng, vocab), name))
    later += [(f"d{i}", texts[i], "distractor") for i in others]
    rng.shuffle(later)
    return with_truth(f"news-{language}", language, "news", stream + later)


def vocabulary(texts: Sequence[str], language: str) -> list[str]:
    """Replacement units for the edits: Han characters, or words."""
    if language == "zh":
        return sorted({c for t in texts[:500] for c in t if "\u4e00" <= c <= "\u9fff"})
    return sorted({w for t in texts[:500] for w in t.split() if w.isalpha()})
