"""Indexes that decide unique / duplicate atomically: in memory here, in Redis (shared) in
worker.index.redis."""

from worker.index.base import Index
from worker.index.memory import MemoryIndex

__all__ = ["Index", "MemoryIndex"]
