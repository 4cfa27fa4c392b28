"""Exact shingle-Jaccard similarity between every pair of texts of a corpus: the ground truth
of the natural near-duplicate sets. English: word 3-shingles; Chinese: character 3-grams (on
purpose not the detector's own bigrams)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from worker.text.features import shingles
from worker.text.normalize import normalize

DUPLICATE = 0.8  # Jaccard at or above: a near-duplicate
DIFFERENT = 0.3  # below: not one; in between: not scored


def shingle_set(text: str, language: str) -> set[str]:
    normalized = normalize(text)
    if language == "zh":
        chars = normalized.replace(" ", "")
        return {chars[i : i + 3] for i in range(max(1, len(chars) - 2))}
    return set(shingles(normalized.split(), 3))


def jaccard_matrix(texts: Sequence[str], language: str) -> np.ndarray:
    """n x n Jaccard similarities (float32), computed exactly with one sparse product."""
    sets = [shingle_set(t, language) for t in texts]
    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for i, s in enumerate(sets):
        for shingle in s:
            rows.append(i)
            cols.append(vocabulary.setdefault(shingle, len(vocabulary)))
    x = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(sets), len(vocabulary))
    )
    inter = (x @ x.T).toarray()
    sizes = np.array([len(s) for s in sets], dtype=np.float32)
    union = sizes[:, None] + sizes[None, :] - inter
    similarity: np.ndarray = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return similarity
