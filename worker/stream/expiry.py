"""The expiry sweep as the worker takes it: with a retention window, every replica ticks
once a second, and a tick steps on while the sweep is behind (the index's expire: one short
script call a step)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

SWEEP_INTERVAL_S = 1.0  # a tick this often
# The most articles one step removes: a removal costs Redis about what a decision does, and
# a step holds the namespace's decisions while it runs.
SWEEP_STEP = 100
# What a tick may spend on its steps: the rest of the second is the decisions'. (Several
# replicas tick apart, each within its own budget.)
SWEEP_BUDGET_S = 0.25


class Expiring(Protocol):
    async def expire(self, limit: int = ...) -> int: ...


async def sweep(
    index: Expiring,
    step: int = SWEEP_STEP,
    budget_s: float = SWEEP_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """One tick: a step of the sweep, and another at once while a step removes all it may
    (expired articles are waiting) and the tick has spent under `budget_s`. Returns how many
    were removed."""
    removed, started = 0, clock()
    while True:
        now = await index.expire(step)
        removed += now
        if now < step or clock() - started >= budget_s:
            return removed
