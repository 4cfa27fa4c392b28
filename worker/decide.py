"""The core step shared by the stream app and `scan`: raw messages in, decisions out.

Decode, fingerprint, then ask the index about the whole batch at once (one Redis round trip);
the index decides the probes in order, so first seen still wins within a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.articles import Article, Reason, Rejection, decode_article
from worker.fingerprint import Fingerprint, Fingerprinter
from worker.index.base import Index
from worker.settings import Settings
from worker.verdict import IdConflict, Probe, Verdict


@dataclass(frozen=True)
class Accepted:
    article: Article
    fingerprint: Fingerprint
    verdict: Verdict


Decision = Accepted | Rejection


class Decider:
    def __init__(self, fingerprinter: Fingerprinter, index: Index, max_message_bytes: int) -> None:
        self.fingerprinter = fingerprinter
        self.index = index
        self.max_message_bytes = max_message_bytes

    @classmethod
    def from_settings(cls, settings: Settings, index: Index) -> Decider:
        fingerprinter = Fingerprinter(settings.shingle_size, settings.chinese_tokens,
                                      settings.min_words)
        return cls(fingerprinter, index, settings.max_message_bytes)

    async def decide(self, values: Sequence[bytes | None]) -> list[Decision]:
        """One decision per value, in order. Raises only when the index cannot answer."""
        decoded = [decode_article(v, self.max_message_bytes) for v in values]
        accepted = [(i, d, self.fingerprinter(d.text)) for i, d in enumerate(decoded)
                    if isinstance(d, Article)]
        outcomes = await self.index.check_and_insert(
            [Probe(a.id, fp.content_hash, fp.simhash) for _, a, fp in accepted]
        )
        decisions: list[Decision] = list(decoded)  # type: ignore[arg-type]  # Articles replaced below
        for (i, article, fp), outcome in zip(accepted, outcomes, strict=True):
            if isinstance(outcome, IdConflict):
                decisions[i] = Rejection(
                    Reason.ID_CONFLICT,
                    f"id {article.id!r} was indexed before with different text; "
                    "updating an article is not supported yet, publish it under a new id",
                )
            else:
                decisions[i] = Accepted(article, fp, outcome)
        return decisions
