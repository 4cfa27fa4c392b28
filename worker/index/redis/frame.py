"""The keys and first arguments of every script that decides articles (lua/frame.lua, whose
header declares the same arguments in the order of FRAME_ARGV: a test holds the two
together)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worker.index.redis.keys import NamespaceKeys

FRAME_ARGV = (
    "epoch",
    "guard",
    "gone_prefix",
    "gone_window_s",
    "retention_s",
    "renewing",
    "postings_prefix",
)


@dataclass(frozen=True)
class Frame:
    keys: NamespaceKeys
    retention_s: int
    renew_on_match: bool
    redelivery_window_s: int

    def head(self, epoch: str, guard: bytes) -> list[Any]:
        """numkeys, KEYS and the frame's ARGV, for the index of `epoch`."""
        keys = [*self.keys.shared, self.keys.seq]
        values = {
            "epoch": epoch,
            "guard": guard,
            "gone_prefix": self.keys.gone,
            "gone_window_s": self.redelivery_window_s,
            "retention_s": self.retention_s,
            "renewing": int(self.renew_on_match),
            "postings_prefix": self.keys.buckets,
        }
        return [len(keys), *keys, *(values[name] for name in FRAME_ARGV)]
