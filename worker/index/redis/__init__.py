"""The shared index in Redis (see worker/index/redis/index.py)."""

from worker.index.redis.index import RedisIndex

__all__ = ["RedisIndex"]
