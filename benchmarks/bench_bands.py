"""The work of a decision by bands over the set sketch as the index grows, on bench_growth's
documents: the in-memory index's band postings (evaluation/bands.py drives them), run in
this process, so what it measures is the work (bucket entries read, candidates compared,
the fullest bucket), not Redis's time; bench_growth measures the Redis index on the same
documents.

At each checkpoint N the next `--measure` documents are decided: printed, per article, the
bucket entries read and the candidates compared (bounded by the design: 16 buckets of at most
32 entries read, at most 16 compared), the fullest bucket, and this process's time per
decision (Python, for the trend only). Then the planted copies found by exact Jaccard
similarity, as bench_growth prints them.
"""

from __future__ import annotations

import argparse
import time
from itertools import islice

from benchmarks.bench_growth import planted, print_found, supply
from evaluation.bands import BandIndex
from worker import defaults, wiring
from worker.settings import Settings
from worker.text.sketch import SketchShape


def grow(args: argparse.Namespace, kind: str) -> None:
    settings = Settings()
    fingerprinter = wiring.fingerprinter(settings)
    shape = SketchShape(defaults.SKETCH_BINS, defaults.SKETCH_BITS)
    index = BandIndex((args.bands, args.rows), settings.similarity, shape)
    articles = supply(kind, fingerprinter, args.seed)
    print(f"\n{kind}: {args.bands} bands of {args.rows} bins")
    print("  indexed | entries read/article | compared/article | fullest bucket | us/decision")
    indexed = 0
    for size in sorted(args.sizes):
        for probe in islice(articles, size - indexed):
            index.decide(probe)
        measured = list(islice(articles, args.measure))  # (fingerprinted before the clock)
        read, compared = index.read, index.compared
        started = time.perf_counter()
        for probe in measured:
            index.decide(probe)
        elapsed = time.perf_counter() - started
        indexed = size + args.measure
        print(
            f"  {size:>9,} | {(index.read - read) / args.measure:>20,.1f} | "
            f"{(index.compared - compared) / args.measure:>16,.1f} | "
            f"{index.largest_bucket:>14,} | {elapsed / args.measure * 1e6:>11,.0f}",
            flush=True,
        )
    if kind != "random":
        originals, copies, jaccards = planted(kind, fingerprinter, args.seed)
        for probe in originals:
            index.decide(probe)
        found = [index.decide(c) == o.id for o, c in zip(originals, copies, strict=True)]
        print_found(found, jaccards)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kinds", default="template,news")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(float(x)) for x in s.split(",")],
        default=[10_000, 100_000],
        help="checkpoints: articles decided before each measurement",
    )
    parser.add_argument("--measure", type=int, default=2000, help="articles decided per checkpoint")
    parser.add_argument("--bands", type=int, default=16)
    parser.add_argument("--rows", type=int, default=4, help="bins per band")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for kind in args.kinds.split(","):
        grow(args, kind)


if __name__ == "__main__":
    main()
