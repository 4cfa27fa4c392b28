"""The bucket cache's search (the worker's read of a batch's buckets, bucket_cache.py) on its own:
CPU per fingerprint in batches of 100, with N entries in the copy, for the native store and
the numpy store, at the default layout. Half of the fingerprints searched are near copies of
indexed ones, half are new. No Redis, no Kafka. With `--markdown`, also the table of
docs/performance.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.markdown import table
from worker import defaults
from worker.index.base import Rule, duplicate_threshold
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.bucket_cache import BucketCache
from worker.index.redis.format import ENTRY
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import Search
from worker.layout.planner import default_layout

BATCH = 100
STORES = {True: "native store", False: "numpy store (without the native extension)"}


def filled(native: bool, simhashes: np.ndarray) -> BucketCache:
    cache = BucketCache(
        BucketAddresses(NamespaceKeys("bench").buckets, default_layout()), native=native
    )
    entries = np.zeros(len(simhashes), dtype=ENTRY)
    entries["fingerprint"] = simhashes
    entries["seq_low"] = np.arange(1, len(simhashes) + 1)
    entries["seen_s"] = 1_700_000_000
    cache.add(entries.tobytes(), len(simhashes))
    return cache


def queries(simhashes: np.ndarray, count: int, rng: np.random.Generator) -> list[int]:
    """Near copies (up to 5 bits flipped) of indexed fingerprints, and new ones, in turn."""
    out = []
    for i in range(count):
        if i % 2:
            fp = int(simhashes[rng.integers(len(simhashes))])
            for bit in rng.integers(0, 64, rng.integers(6)).tolist():
                fp ^= 1 << bit
        else:
            fp = int(rng.integers(0, 1 << 63)) << 1 | int(rng.integers(2))
        out.append(fp)
    return out


def us_per_search(cache: BucketCache, searched: list[int], search: Search, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for at in range(0, len(searched), BATCH):
            cache.nearest(searched[at : at + BATCH], search)
        best = min(best, time.process_time() - start)
    return best / len(searched) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="entries in the copy")
    parser.add_argument("--searches", type=int, default=10_000, help="fingerprints searched")
    parser.add_argument("--rounds", type=int, default=3, help="the best of these is printed")
    parser.add_argument("--numpy-up-to", type=int, default=100_000, help="larger: native only")
    parser.add_argument(
        "--markdown", action="store_true", help="also print the figures as a Markdown table"
    )
    args = parser.parse_args()
    layout = default_layout()
    rule = Rule.of(layout, duplicate_threshold(layout, None), defaults.SIMILARITY)
    search = Search(rule.search_radius, rule.max_candidates, defaults.MAX_BUCKET_READ, None)
    rng = np.random.default_rng(7)
    print(
        f"the bucket cache's search at the default layout ({layout.probes} buckets "
        f"probed per fingerprint), batches of {BATCH}; CPU us per fingerprint, best of "
        f"{args.rounds}"
    )
    sizes = [int(s) for s in args.sizes.split(",")]
    measured: dict[bool, dict[int, float]] = {native: {} for native in STORES}
    for size in sizes:
        simhashes = rng.integers(0, np.iinfo(np.uint64).max, size, dtype=np.uint64)
        searched = queries(simhashes, args.searches, rng)
        line = f"  {size:>9,} entries:"
        stores = [True] if size > args.numpy_up_to else [True, False]
        for native in stores:
            cache = filled(native, simhashes)
            if cache.native == native:  # (the native store may not be installed)
                us = measured[native][size] = us_per_search(cache, searched, search, args.rounds)
                line += f"  {'native' if native else 'numpy'} {us:7.1f}"
        print(line, flush=True)
    if args.markdown:
        print("\n" + markdown(sizes, measured))


def markdown(sizes: list[int], measured: dict[bool, dict[int, float]]) -> str:
    """The table of docs/performance.md: CPU per fingerprint by store and entries."""
    rows = []
    for native, name in STORES.items():
        us = measured[native]
        rows.append([name, *(f"{us[n]:.1f} us" if n in us else "(not run)" for n in sizes)])
    return table(["entries in the copy", *(f"{n:,}" for n in sizes)], rows)


if __name__ == "__main__":
    main()
