"""The shared index in Redis: the index over SimHash tables (index.py) or bands
(band_index.py), its client (client.py), its Lua scripts (lua/, called through scripts.py),
their storage format (format.py), its keys (keys.py), and the worker-side half of a check
over tables (addresses.py, bucket_cache.py, nearest.py)."""

from worker.index.redis.band_index import RedisBandIndex
from worker.index.redis.index import RedisIndex

__all__ = ["RedisBandIndex", "RedisIndex"]
