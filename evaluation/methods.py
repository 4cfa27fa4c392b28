"""The detectors compared, each run over a stream in order: first seen wins, as the worker
decides."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evaluation.datasets import Item
from evaluation.truth import SHINGLE, units
from worker import wiring
from worker.index.memory import MemoryIndex
from worker.model import Accepted, Rejection
from worker.settings import Settings
from worker.text.normalize import normalize


class Detector(Protocol):
    @property
    def name(self) -> str: ...

    def run(self, items: Sequence[Item], language: str) -> list[str | None]:
        """For each item, the id of the earlier item it duplicates, or None."""
        ...


@dataclass
class DedupWorkerDetector:
    """This project's detector as `dedup-worker scan` runs it: the worker's pipeline (decode,
    fingerprint, index) over the items as JSON messages, with the default settings changed by
    `settings` (e.g. {"threshold": 10})."""

    settings: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        changed = ", ".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        return f"dedup-worker ({changed or 'defaults'})"

    def worker_settings(self) -> Settings:
        # (large items, e.g. a long manual page, are evaluated too, not dead-lettered)
        return Settings(**{"max_message_bytes": 1 << 26, **self.settings})

    def run(
        self, items: Sequence[Item], language: str, index: MemoryIndex | None = None
    ) -> list[str | None]:
        """The verdicts, in a new index (or in `index`, as it holds)."""
        settings = self.worker_settings()
        pipeline = wiring.pipeline(
            settings, index or wiring.memory_index(settings, clock_ms=lambda: 0)
        )
        messages = [json.dumps({"id": i.id, "text": i.text}).encode() for i in items]
        out: list[str | None] = []
        with asyncio.Runner() as runner:
            for start in range(0, len(messages), settings.batch_size):
                for decision in runner.run(
                    pipeline.run(messages[start : start + settings.batch_size])
                ):
                    if isinstance(decision, Rejection):
                        raise ValueError(f"an evaluation item was rejected: {decision.detail}")
                    assert isinstance(decision, Accepted)
                    out.append(
                        decision.verdict.duplicate_of if decision.verdict.is_duplicate else None
                    )
        return out


def shingles(text: str) -> set[bytes]:
    """Unit 3-grams of the item's raw text, normalised (markup and all): what a user would
    give MinHash without extracting anything."""
    found = units(normalize(text))
    if len(found) < SHINGLE:
        return {" ".join(found).encode()}
    return {" ".join(found[i : i + SHINGLE]).encode() for i in range(len(found) - SHINGLE + 1)}


@dataclass
class MinHashLSH:
    """datasketch MinHashLSH over unit 3-grams, 128 permutations; candidates verified by their
    estimated Jaccard (a stronger baseline than the LSH answer alone); the most similar
    earlier item wins."""

    threshold: float = 0.8
    num_perm: int = 128

    @property
    def name(self) -> str:
        return f"datasketch MinHashLSH {self.threshold}"

    def run(self, items: Sequence[Item], language: str) -> list[str | None]:
        from datasketch import MinHash
        from datasketch import MinHashLSH as LSH

        lsh = LSH(threshold=self.threshold, num_perm=self.num_perm)
        template = MinHash(num_perm=self.num_perm)
        kept: dict[str, Any] = {}
        out: list[str | None] = []
        for item in items:
            m = template.copy()
            m.update_batch(list(shingles(item.text)))
            scored = [(m.jaccard(kept[c]), c) for c in lsh.query(m)]
            best = max(scored, default=(0.0, None))
            out.append(best[1] if best[1] is not None and best[0] >= self.threshold else None)
            if item.id not in kept:  # every item is remembered, duplicates too
                lsh.insert(item.id, m)
                kept[item.id] = m
        return out


@dataclass
class SimhashLibrary:
    """The `simhash` PyPI library as it comes: Simhash(text) and SimhashIndex(k=3)."""

    k: int = 3
    name: str = "simhash library defaults"
    failures: int = 0  # texts it could not fingerprint (its issue #74 under numpy 2)

    def run(self, items: Sequence[Item], language: str) -> list[str | None]:
        import logging

        from simhash import Simhash, SimhashIndex

        logging.getLogger("simhash").setLevel(logging.ERROR)  # "big bucket" warnings
        index = SimhashIndex([], k=self.k)
        out: list[str | None] = []
        for item in items:
            try:
                fp = Simhash(item.text)
            except OverflowError:  # a 4-gram repeated over 255 times
                self.failures += 1
                out.append(None)
                continue
            near = index.get_near_dups(fp)
            if near:
                out.append(min(near))
            else:
                out.append(None)
                index.add(item.id, fp)
        return out
