"""What SimHash does to a pair of texts at cosine similarity C (Charikar 2002). Pure.

Each fingerprint bit is the sign of a random projection, so two vectors at angle theta
agree on a bit with probability 1 - theta/pi, independently from bit to bit; their
Hamming distance is then Binomial(64, theta/pi).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import acos, comb, degrees, pi

from worker.layout.tables import Layout
from worker.model import SIMHASH_BITS as BITS


@dataclass(frozen=True)
class CosineFigures:
    cosine: float
    angle_degrees: float
    bit_agreement: float  # probability that one bit is equal in both fingerprints
    equal_bits: float  # expected, out of 64
    differing_bits: float  # expected Hamming distance
    exact_collision: float  # probability that all 64 bits agree
    within_threshold: float  # probability that the distance is at most k
    found: float  # probability that the index finds the pair within k (tables' recall)


def distance_distribution(cosine: float) -> list[float]:
    """P(Hamming distance = d) for d = 0..64."""
    differ = acos(cosine) / pi
    return [comb(BITS, d) * differ**d * (1 - differ) ** (BITS - d) for d in range(BITS + 1)]


def figures(cosine: float, layout: Layout) -> CosineFigures:
    if not -1.0 <= cosine <= 1.0:
        raise ValueError(f"cosine must be in [-1, 1], got {cosine}")
    theta = acos(cosine)
    agree = 1 - theta / pi
    dist = distance_distribution(cosine)
    search_radius = layout.search_radius
    return CosineFigures(
        cosine=cosine,
        angle_degrees=degrees(theta),
        bit_agreement=agree,
        equal_bits=BITS * agree,
        differing_bits=BITS * (1 - agree),
        exact_collision=agree**BITS,
        within_threshold=sum(dist[: search_radius + 1]),
        found=sum(p * layout.recall(d) for d, p in enumerate(dist[: search_radius + 1])),
    )
