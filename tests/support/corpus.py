"""Real news text for the tests (see worker.corpora; installed by the `test` extra)."""

from __future__ import annotations

import random
from typing import Any

from evaluation.corpora import lee_news as lee_articles

__all__ = ["lee_articles", "make_articles"]


def make_articles(count: int, seed: int = 1) -> list[dict[str, Any]]:
    """Articles from real news: each new one is a Lee article with a fifth of its words swapped
    for others from the corpus (so it is new); 10% are exact copies and 5% one-word edits of a
    recent one."""
    rng = random.Random(seed)
    texts = [t.split() for t in lee_articles()]
    vocab = sorted({w for words in texts for w in words})
    recent: list[list[str]] = []
    out = []
    for i in range(count):
        roll = rng.random()
        if recent and roll < 0.10:
            words = rng.choice(recent)
        elif recent and roll < 0.15:
            words = list(rng.choice(recent))
            words[rng.randrange(len(words))] = rng.choice(vocab)
        else:
            words = list(texts[i % len(texts)])
            for j in rng.sample(range(len(words)), len(words) // 5):
                words[j] = rng.choice(vocab)
            recent = [*recent[-999:], words]
        out.append({"id": f"a{i}", "text": " ".join(words)})
    return out
