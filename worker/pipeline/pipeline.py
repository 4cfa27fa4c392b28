"""The core step shared by the stream app, `scan` and `backfill`: raw messages in, decisions
out.

Decode, fingerprint, then ask the index about each run of articles at once (one round trip);
the index decides the probes in order, so first seen still wins within a batch. A deletion
between two runs is applied between them, in its place.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from worker.index.base import Index
from worker.model import Accepted, Article, Decision, Deletion, Forgotten, Probe, Rejection
from worker.pipeline.decode import decode_article
from worker.text.fingerprint import Fingerprinter


class Pipeline:
    def __init__(self, fingerprinter: Fingerprinter, index: Index, max_message_bytes: int) -> None:
        self.fingerprinter = fingerprinter
        self.index = index
        self.max_message_bytes = max_message_bytes

    async def run(
        self,
        values: Sequence[bytes | None],
        positions: Sequence[tuple[int, int]] | None = None,
    ) -> list[Decision]:
        """One decision per value, in order; `positions`: each value's (partition, offset) in
        the input topic (Probe.position). Raises only when the index cannot answer."""
        decoded = [decode_article(v, self.max_message_bytes) for v in values]
        decisions: list[Decision | None] = [
            d if isinstance(d, Rejection) else None for d in decoded
        ]
        work = [(i, d) for i, d in enumerate(decoded) if not isinstance(d, Rejection)]
        for _, run in itertools.groupby(work, lambda w: type(w[1])):
            items = list(run)
            articles = [(i, a) for i, a in items if isinstance(a, Article)]
            await self._check(articles, decisions, positions)
            await self._forget([(i, d) for i, d in items if isinstance(d, Deletion)], decisions)
        assert all(d is not None for d in decisions)
        return decisions  # type: ignore[return-value]  # every slot was filled above

    async def _forget(
        self, items: list[tuple[int, Deletion]], decisions: list[Decision | None]
    ) -> None:
        if items:
            held = await self.index.forget([d.id for _, d in items])
            for (i, deletion), was in zip(items, held, strict=True):
                decisions[i] = Forgotten(deletion.id, was)

    async def _check(
        self,
        items: list[tuple[int, Article]],
        decisions: list[Decision | None],
        positions: Sequence[tuple[int, int]] | None,
    ) -> None:
        if not items:
            return
        fingerprints = self.fingerprinter.many(
            [a.text for _, a in items], [a.format for _, a in items]
        )
        articles = [(i, a, fp) for (i, a), fp in zip(items, fingerprints, strict=True)]
        verdicts = await self.index.check_and_insert(
            [
                Probe(
                    a.id,
                    fp.content_hash,
                    fp.search,
                    fp.sketch,
                    None if not positions else positions[i],
                )
                for i, a, fp in articles
            ]
        )
        for (i, article, fp), verdict in zip(articles, verdicts, strict=True):
            decisions[i] = Accepted(article, fp, verdict)
