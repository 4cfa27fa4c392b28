"""Where a namespace's bytes go in Redis: MEMORY USAGE of every key, by the part of the index
it holds, per article recorded. Run it after bench_growth (its namespaces are growth-KIND):

    .venv/bin/python -m benchmarks.redis_bytes --redis-url redis://localhost:6379/10 \
        --namespace growth-news
"""

from __future__ import annotations

import argparse
from collections import Counter

import redis

from worker.index.redis.keys import NamespaceKeys


def part_of(keys: NamespaceKeys, key: bytes) -> str:
    """Which part of the index a key holds."""
    buckets, name = keys.buckets.encode(), key.decode(errors="replace")
    if key.startswith(buckets):
        kind = key[len(buckets) : len(buckets) + 1]
        band_group = len(key) == len(buckets) + 5  # letter, band, 3 bytes of group
        return {
            b"b": "band groups" if band_group else "own strings (crowded buckets)",
            b"l": "line groups" if band_group else "own strings (crowded buckets)",
            b"d": "dependents",
            b"n": "lines hash",
        }.get(kind, "table buckets")
    for prefix, part in (
        (keys.exact, "exact texts"),
        (keys.ids, "ids by number"),
        (keys.gone, "kept after deletions"),
    ):
        if key.startswith(prefix.encode()):
            return part
    return {keys.docs: "records", keys.recent: "recent ring"}.get(name, "other")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://localhost:6379/10")
    parser.add_argument("--namespace", required=True)
    args = parser.parse_args()
    client = redis.Redis.from_url(args.redis_url)
    keys = NamespaceKeys(args.namespace)
    records = int(client.hlen(keys.docs))
    if not records:
        raise SystemExit(f"namespace {args.namespace!r} has no records there")
    sizes: Counter[str] = Counter()
    for key in client.scan_iter(match=keys.prefix + "*"):
        sizes[part_of(keys, key)] += int(client.memory_usage(key, samples=0) or 0)
    print(f"{args.namespace}: {records:,} articles recorded; bytes per article:")
    for part, size in sizes.most_common():
        print(f"  {part:32} {size / records:8.1f}")
    print(f"  {'all':32} {sum(sizes.values()) / records:8.1f}")


if __name__ == "__main__":
    main()
