"""The expiry sweep as the worker takes it: with a retention window, every replica ticks
once a second, and a tick steps on while the sweep is behind (the index's expire: one short
script call a step)."""

from __future__ import annotations

from typing import Protocol

SWEEP_INTERVAL_S = 1.0  # a tick this often
# The most articles one step removes: a removal costs Redis about what a decision does, and
# a step holds the namespace's decisions while it runs.
SWEEP_STEP = 100
SWEEP_BURST = 100  # steps a tick takes at most: a replica removes up to 10,000 a second


class Expiring(Protocol):
    async def expire(self, limit: int = ...) -> int: ...


async def sweep(index: Expiring, step: int = SWEEP_STEP, burst: int = SWEEP_BURST) -> int:
    """One tick: a step of the sweep, and another at once while a step removes all it may
    (expired articles are waiting), up to `burst` steps. Returns how many were removed."""
    removed = 0
    for _ in range(burst):
        now = await index.expire(step)
        removed += now
        if now < step:
            break
    return removed
