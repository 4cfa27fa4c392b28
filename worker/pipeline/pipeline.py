"""The core step shared by the stream app, `scan` and `backfill`: raw messages in, decisions
out.

Decode, read (HTML and e-mail to what a reader sees: reading.py), fingerprint, then ask the
index about the batch's articles and deletions at once: the index decides them in order, as
one unit (Index.decide), so first seen wins within a batch, a deletion applies in its place,
and no other batch comes between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worker.index.base import Index, Op
from worker.model import (
    Accepted,
    Article,
    Decision,
    Fingerprint,
    Forget,
    Forgotten,
    Owner,
    Probe,
    Rejection,
)
from worker.pipeline.decode import decode_article
from worker.pipeline.reading import InProcessReader, Reader
from worker.text.fingerprint import Fingerprinter


@dataclass(frozen=True)
class Prepared:
    """A batch decoded and fingerprinted, waiting for the index: the rejections already
    decided; the articles and deletions in order (`asked`: each one's place in the batch,
    and an article's fingerprint), and what the index is asked about each (`ops`)."""

    decisions: list[Decision | None]
    asked: list[tuple[int, Article | None, Fingerprint | None]]
    ops: list[Op]


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
        fingerprint_of = {i: fp for (i, _, _), fp in zip(articles, fingerprints, strict=True)}
        asked: list[tuple[int, Article | None, Fingerprint | None]] = []
        ops: list[Op] = []
        for i, item in enumerate(decoded):
            position = positions[i] if positions else None
            if decisions[i] is not None:  # (unreadable)
                continue
            if isinstance(item, Article):
                fp = fingerprint_of[i]
                asked.append((i, item, fp))
                ops.append(Probe(item.id, fp.content_hash, fp.search, fp.sketch, position, fp.line))
            elif not isinstance(item, Rejection):
                asked.append((i, None, None))
                ops.append(Forget(item.id, position))
        return Prepared(decisions, asked, ops)

    async def decide(self, prepared: Prepared, owner: Owner | None = None) -> list[Decision]:
        """Ask the index (one try: may be called again after a failure, as the index is
        idempotent per message); `owner`: as for Index.decide."""
        decisions = list(prepared.decisions)
        answers = await self.index.decide(prepared.ops, owner)
        for (i, article, fp), op, answer in zip(prepared.asked, prepared.ops, answers, strict=True):
            if article is not None and fp is not None and not isinstance(answer, bool):
                decisions[i] = Accepted(article, fp, answer)
            else:
                decisions[i] = Forgotten(op.id, bool(answer))
        assert all(d is not None for d in decisions)
        return decisions  # type: ignore[return-value]  # every slot was filled above
