"""The shared index in Redis: what every namespace's index does (namespace_index.py), over
SimHash tables (index.py) or bands (band_index.py); its client (client.py), its Lua scripts
(lua/, called through scripts.py), their storage format (format.py), its keys (keys.py), and
the worker-side half of a check over tables (addresses.py, bucket_cache.py, nearest.py)."""

from worker.index.redis.band_index import RedisBandIndex
from worker.index.redis.index import RedisIndex
from worker.index.redis.namespace_index import NamespaceIndex

__all__ = ["NamespaceIndex", "RedisBandIndex", "RedisIndex"]
