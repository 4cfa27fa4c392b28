"""The core step shared by the stream app, `scan` and `backfill`: raw messages in, decisions
out.

Decode, read (HTML and e-mail to what a reader sees: reading.py), fingerprint, then ask the
index about each run of articles at once (one round trip); the index decides the probes in
order, so first seen still wins within a batch. A deletion between two runs is applied between
them, in its place.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from worker.index.base import Index
from worker.model import Accepted, Article, Decision, Deletion, Forgotten, Probe, Rejection
from worker.pipeline.decode import decode_article
from worker.pipeline.reading import InProcessReader, Reader
from worker.text.fingerprint import Fingerprint, Fingerprinter


@dataclass(frozen=True)
class _Checks:
    items: list[tuple[int, Article, Fingerprint]]  # (place in the batch, article, fingerprint)


@dataclass(frozen=True)
class _Deletions:
    items: list[tuple[int, Deletion]]


@dataclass(frozen=True)
class Prepared:
    """A batch decoded and fingerprinted, waiting for the index: the rejections already
    decided, then each run of articles (to check) and of deletions (to forget), in order."""

    decisions: list[Decision | None]
    steps: list[_Checks | _Deletions]
    positions: Sequence[tuple[int, int]] | None


class Pipeline:
    def __init__(
        self,
        fingerprinter: Fingerprinter,
        index: Index,
        max_message_bytes: int,
        reader: Reader | None = None,
    ) -> None:
        """`reader`: reads the texts (default: in this process, without a deadline)."""
        self.fingerprinter = fingerprinter
        self.index = index
        self.max_message_bytes = max_message_bytes
        self.reader = reader or InProcessReader(fingerprinter)

    async def run(
        self,
        values: Sequence[bytes | None],
        positions: Sequence[tuple[int, int]] | None = None,
    ) -> list[Decision]:
        """One decision per value, in order; `positions`: each value's (partition, offset) in
        the input topic (Probe.position). Raises only when the index cannot answer."""
        return await self.decide(await self.prepare(values, positions))

    async def prepare(
        self,
        values: Sequence[bytes | None],
        positions: Sequence[tuple[int, int]] | None = None,
    ) -> Prepared:
        """Decode, read and fingerprint (the work that needs no index; the stream app does it
        for the next batch while the index decides this one). A message that cannot be read
        is a Rejection; nothing here raises for one message."""
        decoded = [decode_article(v, self.max_message_bytes) for v in values]
        decisions: list[Decision | None] = [
            d if isinstance(d, Rejection) else None for d in decoded
        ]
        found = [(i, d) for i, d in enumerate(decoded) if isinstance(d, Article)]
        read = await self.reader.read([a.text for _, a in found], [a.format for _, a in found])
        articles = []
        for (i, article), text in zip(found, read, strict=True):
            if isinstance(text, Rejection):
                decisions[i] = text
            else:
                articles.append((i, article, text))
        fingerprints = self.fingerprinter.many_read(
            [text for _, _, text in articles], [a.text for _, a, _ in articles]
        )
        printed = {i: fp for (i, _, _), fp in zip(articles, fingerprints, strict=True)}
        work = [(i, d) for i, d in enumerate(decoded) if decisions[i] is None]
        steps: list[_Checks | _Deletions] = []
        for kind, run in itertools.groupby(work, lambda w: type(w[1])):
            items = list(run)
            if kind is Article:
                steps.append(
                    _Checks([(i, a, printed[i]) for i, a in items if isinstance(a, Article)])
                )
            else:
                steps.append(_Deletions([(i, d) for i, d in items if isinstance(d, Deletion)]))
        return Prepared(decisions, steps, positions)

    async def decide(self, prepared: Prepared) -> list[Decision]:
        """Ask the index, run after run; may be called again after a failure (the index is
        idempotent per id)."""
        decisions = list(prepared.decisions)
        for step in prepared.steps:
            if isinstance(step, _Checks):
                await self._check(step.items, decisions, prepared.positions)
            else:
                await self._forget(step.items, decisions)
        assert all(d is not None for d in decisions)
        return decisions  # type: ignore[return-value]  # every slot was filled above

    async def _forget(
        self, items: list[tuple[int, Deletion]], decisions: list[Decision | None]
    ) -> None:
        held = await self.index.forget([d.id for _, d in items])
        for (i, deletion), was in zip(items, held, strict=True):
            decisions[i] = Forgotten(deletion.id, was)

    async def _check(
        self,
        articles: list[tuple[int, Article, Fingerprint]],
        decisions: list[Decision | None],
        positions: Sequence[tuple[int, int]] | None,
    ) -> None:
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
