"""The detectors compared, each run over a stream in order: first seen wins, and only
articles judged original are remembered (as the worker does)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evaluation.datasets import Item
from worker import defaults
from worker.index import MemoryIndex
from worker.layout import planner
from worker.model import Probe
from worker.text.features import tokenize
from worker.text.fingerprint import Fingerprinter
from worker.text.normalize import normalize


class Detector(Protocol):
    @property
    def name(self) -> str: ...

    def run(self, items: Sequence[Item], language: str) -> list[str | None]:
        """For each item, the id of the earlier item it duplicates, or None."""
        ...


@dataclass
class DedupWorkerDetector:
    """This project's detector at the given threshold, otherwise as the worker runs it by
    default: exact-content hash, then the search fingerprint within `threshold` bits, verified
    by the verification fingerprint."""

    threshold: int = defaults.THRESHOLD
    verify_threshold: int = defaults.VERIFY_THRESHOLD

    @property
    def name(self) -> str:
        return f"dedup-worker k={self.threshold} v={self.verify_threshold}"

    def run(self, items: Sequence[Item], language: str) -> list[str | None]:
        fingerprinter = Fingerprinter()
        layout = planner.choose(
            self.threshold,
            defaults.LAYOUT,
            defaults.EXPECTED_DOCS,
            defaults.RECALL,
            defaults.MAX_BUCKET_READ,
        )
        index = MemoryIndex(layout, verify_threshold=self.verify_threshold, clock_ms=lambda: 0)
        out: list[str | None] = []
        for item, fp in zip(items, fingerprinter.many([i.text for i in items]), strict=True):
            verdict = index.check_and_insert_one(
                Probe(item.id, fp.content_hash, fp.search, fp.verification)
            )
            out.append(verdict.duplicate_of)
        return out


@dataclass
class MinHashLSH:
    """datasketch MinHashLSH over the same features, 128 permutations; candidates verified by
    their estimated Jaccard (a stronger baseline than the LSH answer alone)."""

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
            m.update_batch([f.encode() for f in set(tokenize(normalize(item.text)).items)])
            scored = [(m.jaccard(kept[c]), c) for c in lsh.query(m)]
            best = max(scored, default=(0.0, None))
            if best[1] is not None and best[0] >= self.threshold:
                out.append(best[1])
            else:
                out.append(None)
                if item.id not in kept:
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
