"""The verdict in a reply of a script that decides articles (lua/frame.lua's header)."""

from __future__ import annotations

from collections.abc import Sequence

from worker.index.base import Rule
from worker.index.redis.format import LINE_SIMILARITY
from worker.model import Kind, Probe, Verdict
from worker.text.simhash import from_bytes


def verdict_of(rule: Rule, probe: Probe, reply: list[bytes | int]) -> Verdict:
    """The verdict in one article's reply, under `rule`."""
    kind = Kind(bytes(reply[0]).decode())
    (
        _,
        distance,
        dup_id,
        dup_fp,
        seen_at,
        replayed,
        candidates,
        hot,
        replaced,
        agreeing,
        original,
        _,  # (its sequence number: numbers_of)
    ) = reply
    assert isinstance(distance, int)
    assert isinstance(seen_at, int)
    assert isinstance(candidates, int)
    assert isinstance(hot, int)
    assert isinstance(agreeing, int)
    assert isinstance(dup_id, bytes)
    assert isinstance(dup_fp, bytes)
    assert isinstance(original, bytes)
    matched = kind is not Kind.UNIQUE
    return Verdict(
        id=probe.id,
        kind=kind,
        fingerprint=probe.fingerprint,
        duplicate_of=dup_id.decode("utf-8") if matched else None,
        distance=distance if distance >= 0 else None,
        duplicate_of_fingerprint=from_bytes(dup_fp) if dup_fp else None,
        similarity=_similarity(rule, agreeing) if matched else None,
        original=original.decode("utf-8") if kind in (Kind.EXACT, Kind.NEAR) else None,
        seen_at_ms=seen_at,
        replayed=bool(replayed),
        candidates=candidates,
        hot_buckets=hot,
        replaced=bool(replaced),
    )


def verdicts_of(
    rule: Rule, probes: Sequence[Probe], replies: Sequence[Sequence[list[bytes | int]]]
) -> list[Verdict]:
    """The verdicts of `probes`, from the replies of the calls that decided them in order."""
    flat = (reply for call in replies for reply in call)
    return [verdict_of(rule, p, reply) for p, reply in zip(probes, flat, strict=True)]


def numbers_of(replies: Sequence[Sequence[list[bytes | int]]]) -> list[int]:
    """The sequence number each reply's article is indexed under (0: in no bucket)."""
    return [int(reply[11]) for call in replies for reply in call]


def _similarity(rule: Rule, agreeing: int) -> float:
    """Sketch bins agreeing, or a short line's similarity (format.LINE_SIMILARITY)."""
    if agreeing >= LINE_SIMILARITY:
        return (agreeing - LINE_SIMILARITY) / 100
    return rule.similarity_of(agreeing)
