"""Per-article fingerprint cost on real news text, measured side by side in one run."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import xxhash

from tests.corpus import lee_articles
from worker.fingerprint import Fingerprinter
from worker.normalize import normalize
from worker.simhash import simhash_reference
from worker.tokens import tokenize


def per_doc_us(fn: Callable[[str], object], texts: list[str], rounds: int) -> float:
    """Median over rounds of the mean time per text, in microseconds."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        samples.append((time.perf_counter() - start) / len(texts) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = list(lee_articles())
    fingerprint = Fingerprinter()
    normalize("warm up")  # builds the normalisation table once

    def floor(text: str) -> object:
        return [xxhash.xxh3_64_intdigest(f.encode()) for f in tokenize(normalize(text)).items]

    def reference(text: str) -> object:
        return simhash_reference(tokenize(normalize(text)).items)

    methods: dict[str, Callable[[str], object]] = {
        "dedup-worker Fingerprinter (numpy)": fingerprint,
        "floor: normalise + shingles + xxh3": floor,
        "bit-by-bit SimHash (reference)": reference,
    }
    try:
        from simhash import Simhash

        methods["simhash library, Simhash(text)"] = Simhash
    except ImportError:
        pass
    try:
        from datasketch import MinHash

        template = MinHash(num_perm=128)

        def minhash(text: str) -> object:
            m = template.copy()
            m.update_batch([f.encode() for f in tokenize(normalize(text)).items])
            return m

        methods["datasketch MinHash-128 (same shingles)"] = minhash
    except ImportError:
        pass

    words = statistics.mean(len(t.split()) for t in texts)
    print(f"{len(texts)} Lee corpus articles, mean {words:.0f} words; median of {args.rounds}")
    ours = per_doc_us(fingerprint, texts, args.rounds)
    for name, fn in methods.items():
        us = ours if fn is fingerprint else per_doc_us(fn, texts, args.rounds)
        print(f"  {name:<42} {us:8.1f} us/article   {us / ours:5.2f}x ours")


if __name__ == "__main__":
    main()
