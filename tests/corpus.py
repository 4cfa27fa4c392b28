"""Real news text for the tests (see worker.corpora; installed by the `test` extra)."""

from worker.corpora import lee_news as lee_articles

__all__ = ["lee_articles"]
