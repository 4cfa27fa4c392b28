"""The shared index in Redis: the index (index.py), its client (client.py), its Lua scripts
(lua/, called through scripts.py), their storage format (format.py), its keys (keys.py), and
the worker-side half of a check (addresses.py, bucket_cache.py, nearest.py)."""

from worker.index.redis.index import RedisIndex

__all__ = ["RedisIndex"]
