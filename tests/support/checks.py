"""What must hold after any fault: every input has a verdict, a repeated verdict is identical to
the first, nothing is its own duplicate, no two copies of a text are both unique, the unique
one of a text's copies in one input partition is the first of them there (first seen wins),
and every alert names as its original an article that was unique."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import redis

from tests.support.tenant import Outputs
from worker.pipeline.outputs import iso_time


def verdicts_by_id(out: Outputs) -> dict[str, list[str]]:
    """id -> every verdict emitted for it, as canonical JSON."""
    seen: dict[str, list[str]] = defaultdict(list)
    for name in ("unique", "duplicates"):
        for body in out.get(name, []):
            seen[body["id"]].append(json.dumps(body, sort_keys=True))
    return seen


def covers(ids: set[str]) -> Any:
    """A collect_until condition: every id has a verdict."""
    return lambda out: ids <= verdicts_by_id(out).keys()


def assert_guarantees(
    out: Outputs,
    articles: list[dict[str, Any]],
    reset_at: str | None = None,
    dead_letters: frozenset[str] = frozenset(),
) -> int:
    """Checks the guarantees; returns how many verdicts were repeats (redeliveries). With
    `reset_at` (an ISO time: the index was emptied then), a text may have been unique once
    before it and once after: what the index lost, it no longer matches. `dead_letters`: the
    reasons of the dead letters expected, each from its own bad message."""
    seen = verdicts_by_id(out)
    missing = {a["id"] for a in articles} - seen.keys()
    assert not missing, f"{len(missing)} articles have no verdict, e.g. {sorted(missing)[:5]}"
    reasons = {body["reason"] for body in out.get("rejected", [])}
    assert reasons == dead_letters, out.get("rejected", [])[:3]
    for article_id, versions in seen.items():
        assert len(set(versions)) == 1, f"{article_id} got different verdicts: {versions}"
    first = {i: json.loads(v[0]) for i, v in seen.items()}
    assert all(v.get("duplicate_of") != i for i, v in first.items()), "a self-duplicate"
    assert all(v.get("original") != i for i, v in first.items()), "its own original"

    unique = {i for i, v in first.items() if "duplicate_of" not in v}
    by_text: dict[str, list[str]] = defaultdict(list)
    for a in articles:
        by_text[a["text"]].append(a["id"])
    for ids in by_text.values():
        both = unique.intersection(ids)
        if reset_at is None:
            assert len(both) <= 1, f"copies of one text are all unique: {sorted(both)}"
            sides = [ids]
        else:
            after = {i for i in both if first[i]["seen_at"] >= reset_at}
            message = f"copies of one text are unique on one side of the reset: {sorted(both)}"
            assert len(after) <= 1, message
            assert len(both - after) <= 1, message
            when = {i: first[i].get("seen_at") or first[i]["detected_at"] for i in ids}
            sides = [[i for i in ids if (when[i] >= reset_at) is s] for s in (False, True)]
        for side in sides:
            assert_first_seen_wins(first, side, unique)
    for i, v in first.items():
        if "duplicate_of" in v:
            assert v["duplicate_of"] in first, f"{i} points at an article with no verdict"
            assert v["original"] in unique, f"{i} names an original that was a duplicate"
    return sum(len(v) - 1 for v in seen.values())


def assert_first_seen_wins(first: dict[str, Any], copies: list[str], unique: set[str]) -> None:
    """Of the copies of one text in one input partition, only the first (the lowest offset)
    may be unique: a later one that is, while an earlier one is a duplicate, overtook it."""
    by_partition: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for i in copies:
        where = first[i]["source"]
        by_partition[where["partition"]].append((where["offset"], i))
    for placed in by_partition.values():
        later = [i for _, i in sorted(placed)[1:]]
        assert not unique.intersection(later), (
            f"a later copy is unique and the first a duplicate: {sorted(placed)}"
        )


def total(out: Outputs) -> int:
    """Messages on the output topics."""
    return sum(map(len, out.values()))


def flush(url: str) -> str:
    """Empty the index; returns the moment it happened, by Redis's clock."""
    client = redis.Redis.from_url(url)
    pipe = client.pipeline(transaction=True)  # (nothing runs between the two)
    pipe.time()
    pipe.flushdb()
    (seconds, micros), _ = pipe.execute()
    client.close()
    return iso_time(seconds * 1000 + micros // 1000)
