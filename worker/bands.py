"""Band math for the pigeonhole index: cut 64 bits into k+1 bands; two fingerprints within
Hamming distance k differ in at most k bands, so at least one band is equal in both."""

from __future__ import annotations

from worker.simhash import BITS

MAX_THRESHOLD = BITS // 4 - 1  # k+1 bands of at least 4 bits each


def band_widths(threshold: int) -> tuple[int, ...]:
    """Widths of the k+1 bands for threshold k, as even as possible, widest first."""
    if not 0 <= threshold <= MAX_THRESHOLD:
        raise ValueError(f"threshold must be 0..{MAX_THRESHOLD}, got {threshold}")
    count = threshold + 1
    base, extra = divmod(BITS, count)
    return tuple(base + 1 if i < extra else base for i in range(count))


def band_values(fingerprint: int, widths: tuple[int, ...]) -> list[int]:
    """The value of each band, the first band taken from the most significant bits."""
    values = []
    shift = BITS
    for width in widths:
        shift -= width
        values.append((fingerprint >> shift) & ((1 << width) - 1))
    return values
