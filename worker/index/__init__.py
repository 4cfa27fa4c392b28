"""Indexes that decide unique / duplicate atomically: in Redis (shared) or in memory."""

from worker.index.base import Index, Outcome
from worker.index.memory import MemoryIndex
from worker.index.redis import RedisIndex

__all__ = ["Index", "MemoryIndex", "Outcome", "RedisIndex"]
