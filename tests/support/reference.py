"""Plain definitions that the fast code is tested (and benchmarked) against."""

from __future__ import annotations

from collections.abc import Sequence

import xxhash

from worker.text.simhash import BITS


def simhash_reference(features: Sequence[str], weights: Sequence[float] | None = None) -> int:
    """The plain bit-by-bit definition, kept as the oracle that `simhash` is tested against."""
    votes = [0.0] * BITS
    for i, feature in enumerate(features):
        h = xxhash.xxh3_64_intdigest(feature.encode("utf-8"))
        w = 1.0 if weights is None else weights[i]
        for j in range(BITS):
            votes[j] += w if (h >> j) & 1 else -w
    return sum(1 << j for j in range(BITS) if votes[j] > 0)
